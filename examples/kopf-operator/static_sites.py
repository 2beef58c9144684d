"""A kopf operator: a StaticSite becomes a ConfigMap with its page, an nginx Deployment
serving it and a Service in front — all three owned by the StaticSite, so that the
garbage collector deletes them with it (the operator has no deletion handler).

    kopf run --standalone static_sites.py
"""

import kopf
from kubernetes import client

GROUP, VERSION, PLURAL = "example.com", "v1", "staticsites"
SITE_LABEL = "example.com/site"


def children(name: str, spec: dict) -> list[dict]:
    """The objects a StaticSite called ``name`` stands for."""
    labels = {SITE_LABEL: name}
    configmap = {"apiVersion": "v1", "kind": "ConfigMap",
                 "metadata": {"name": f"{name}-content", "labels": labels},
                 "data": {"index.html": spec["html"]}}
    deployment = {
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": name, "labels": labels},
        "spec": {"replicas": spec.get("replicas", 1),
                 "selector": {"matchLabels": labels},
                 "template": {"metadata": {"labels": labels}, "spec": {
                     "containers": [{"name": "nginx", "image": "nginx:1.27",
                                     "ports": [{"containerPort": 80}],
                                     "volumeMounts": [{"name": "content",
                                                       "mountPath": "/usr/share/nginx/html"}]}],
                     "volumes": [{"name": "content",
                                  "configMap": {"name": f"{name}-content"}}]}}}}
    service = {"apiVersion": "v1", "kind": "Service",
               "metadata": {"name": name, "labels": labels},
               "spec": {"selector": labels, "ports": [{"port": 80, "targetPort": 80}]}}
    return [configmap, deployment, service]


def _apply(obj: dict, namespace: str) -> None:
    """Create ``obj``, or bring the existing one in line with it."""
    api, kind = {"ConfigMap": (client.CoreV1Api, "config_map"),
                 "Service": (client.CoreV1Api, "service"),
                 "Deployment": (client.AppsV1Api, "deployment")}[obj["kind"]]
    api = api()
    try:
        getattr(api, f"create_namespaced_{kind}")(namespace, obj)
    except client.ApiException as err:
        if err.status != 409:
            raise
        getattr(api, f"patch_namespaced_{kind}")(obj["metadata"]["name"], namespace, obj)


@kopf.on.create(GROUP, VERSION, PLURAL)
@kopf.on.update(GROUP, VERSION, PLURAL, field="spec")
def reconcile(body, spec, name, namespace, patch, **_):
    objects = children(name, spec)
    kopf.adopt(objects, owner=body)  # ownerReferences (controller, blockOwnerDeletion)
    for obj in objects:
        _apply(obj, namespace)
    patch.status["phase"] = "Ready"
    patch.status["children"] = [f"{obj['kind']}/{obj['metadata']['name']}" for obj in objects]
    patch.status["replicas"] = spec.get("replicas", 1)
