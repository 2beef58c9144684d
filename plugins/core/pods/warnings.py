"""The warnings a pod (or a pod template) earns on create (``pkg/api/pod/warnings.go``):
deprecated node labels, annotations and volume plugins, duplicated or empty names,
fractional byte quantities, env entries that hide others, ambiguous ports, negative grace
periods and selectors that match nothing.

``pod_warnings(pod)`` is ``GetWarningsForPod``; ``pod_template_warnings(template, path)``
is ``GetWarningsForPodTemplate`` for a kind that embeds a template at ``path``.
"""

from __future__ import annotations

from kapiserver.apimachinery import quantity
from kapiserver.apimachinery.field_errors import FieldPath, go_quote
from kapiserver.apis.core.helpers import (SECCOMP_CONTAINER_ANNOTATION_KEY_PREFIX,
                                          SECCOMP_POD_ANNOTATION_KEY)

#: ``pkg/api/node``'s deprecated node labels.
DEPRECATED_NODE_LABELS = {
    "beta.kubernetes.io/arch": 'deprecated since v1.14; use "kubernetes.io/arch" instead',
    "beta.kubernetes.io/os": 'deprecated since v1.14; use "kubernetes.io/os" instead',
    "failure-domain.beta.kubernetes.io/region":
        'deprecated since v1.17; use "topology.kubernetes.io/region" instead',
    "failure-domain.beta.kubernetes.io/zone":
        'deprecated since v1.17; use "topology.kubernetes.io/zone" instead',
    "beta.kubernetes.io/instance-type":
        'deprecated since v1.17; use "node.kubernetes.io/instance-type" instead',
}
DEPRECATED_ANNOTATIONS = (
    ("scheduler.alpha.kubernetes.io/critical-pod",
     'non-functional in v1.16+; use the "priorityClassName" field instead'),
    ("security.alpha.kubernetes.io/sysctls",
     'non-functional in v1.11+; use the "sysctls" field instead'),
    ("security.alpha.kubernetes.io/unsafe-sysctls",
     'non-functional in v1.11+; use the "sysctls" field instead'),
)
#: Volume plugins on their way out, in the order upstream checks them.
DEPRECATED_VOLUMES = (
    ("photonPersistentDisk", "deprecated in v1.11, non-functional in v1.16+"),
    ("gitRepo", "deprecated in v1.11"),
    ("scaleIO", "deprecated in v1.16, non-functional in v1.22+"),
    ("flocker", "deprecated in v1.22, non-functional in v1.25+"),
    ("storageos", "deprecated in v1.22, non-functional in v1.25+"),
    ("quobyte", "deprecated in v1.22, non-functional in v1.25+"),
    ("glusterfs", "deprecated in v1.25, non-functional in v1.26+"),
    ("ephemeral", None),
    ("cephfs", "deprecated in v1.28, non-functional in v1.31+"),
    ("rbd", "deprecated in v1.28, non-functional in v1.31+"),
)
#: The field names upstream's messages use (its Go field names, not the JSON ones).
_VOLUME_PATH_NAMES = {"storageos": "storageOS"}
_SECCOMP_MESSAGE = 'non-functional in v1.27+; use the "seccompProfile" field instead'
_APPARMOR_PREFIX = "container.apparmor.security.beta.kubernetes.io/"
_NULL_SELECTOR = "a null labelSelector results in matching no pod"


def _dict(value) -> dict:
    return value if isinstance(value, dict) else {}


def _dicts(value) -> list[dict]:
    return [item for item in value if isinstance(item, dict)] if isinstance(value, list) else []


def _child(base: FieldPath | None, *names: str) -> FieldPath:
    return base.child(*names) if base is not None else FieldPath(*names)


def _fractional(resources: dict, name: str) -> str | None:
    """The canonical text of a byte quantity that is not whole, else None."""
    value = resources.get(name) if isinstance(resources, dict) else None
    if value is None:
        return None
    try:
        parsed = quantity.from_json(value)
    except (quantity.QuantityError, ValueError, TypeError):
        return None
    return parsed.canonical() if parsed.milli_value() % 1000 else None


def _fractional_warnings(resources: dict, path: FieldPath, names=("memory",
                                                                   "ephemeral-storage")):
    warnings = []
    for name in names:
        text = _fractional(resources, name)
        if text is not None:
            warnings.append(f"{path.key(name)}: fractional byte value {go_quote(text)} is "
                            "invalid, must be an integer")
    return warnings


def _containers_with_path(spec: dict, spec_path: FieldPath):
    for key in ("initContainers", "containers", "ephemeralContainers"):
        for index, container in enumerate(_dicts(spec.get(key))):
            yield container, spec_path.child(key).index(index)


def _go_port(port: dict) -> str:
    """``%+v`` of an ``api.ContainerPort``."""
    return (f"{{Name:{port.get('name') or ''} HostPort:{port.get('hostPort') or 0} "
            f"ContainerPort:{port.get('containerPort') or 0} "
            f"Protocol:{port.get('protocol') or ''} HostIP:{port.get('hostIP') or ''}}}")


def spec_and_meta_warnings(base: FieldPath | None, spec: dict, meta: dict) -> list[str]:
    """``warningsForPodSpecAndMeta``."""
    spec, meta = _dict(spec), _dict(meta)
    annotations = _dict(meta.get("annotations"))
    warnings: list[str] = []
    spec_path = _child(base, "spec")

    for key in sorted(_dict(spec.get("nodeSelector"))):
        if key in DEPRECATED_NODE_LABELS:
            warnings.append(f"{spec_path.child('nodeSelector').key(key)}: "
                            f"{DEPRECATED_NODE_LABELS[key]}")
    node_affinity = _dict(_dict(spec.get("affinity")).get("nodeAffinity"))
    required = _dict(node_affinity.get("requiredDuringSchedulingIgnoredDuringExecution"))
    terms_path = spec_path.child("affinity", "nodeAffinity",
                                 "requiredDuringSchedulingIgnoredDuringExecution",
                                 "nodeSelectorTerms")
    for index, term in enumerate(_dicts(required.get("nodeSelectorTerms"))):
        warnings += _node_selector_term_warnings(term, terms_path.index(index))
    preferred_path = spec_path.child("affinity", "nodeAffinity",
                                     "preferredDuringSchedulingIgnoredDuringExecution")
    for index, term in enumerate(_dicts(node_affinity.get(
            "preferredDuringSchedulingIgnoredDuringExecution"))):
        warnings += _node_selector_term_warnings(_dict(term.get("preference")),
                                                 preferred_path.index(index).child("preference"))
    for index, constraint in enumerate(_dicts(spec.get("topologySpreadConstraints"))):
        here = spec_path.child("topologySpreadConstraints").index(index)
        key = constraint.get("topologyKey")
        if key in DEPRECATED_NODE_LABELS:
            warnings.append(f"{here.child('topologyKey')}: {key} is "
                            f"{DEPRECATED_NODE_LABELS[key]}")
        if constraint.get("labelSelector") is None:
            warnings.append(f"{here.child('labelSelector')}: {_NULL_SELECTOR}")

    annotations_path = _child(base, "metadata", "annotations")
    for key, message in DEPRECATED_ANNOTATIONS:
        if key in annotations:
            warnings.append(f"{annotations_path.key(key)}: {message}")

    for index, volume in enumerate(_dicts(spec.get("volumes"))):
        here = spec_path.child("volumes").index(index)
        for source, message in DEPRECATED_VOLUMES:
            if volume.get(source) is None:
                continue
            if source == "ephemeral":
                claim = _dict(_dict(volume["ephemeral"]).get("volumeClaimTemplate"))
                if claim:
                    claim_path = here.child("ephemeral", "volumeClaimTemplate", "spec")
                    resources = _dict(_dict(claim.get("spec")).get("resources"))
                    for kind in ("requests", "limits"):
                        warnings += _fractional_warnings(
                            _dict(resources.get(kind)), claim_path.child("resources", kind),
                            ("storage",))
                continue
            warnings.append(f"{here.child(_VOLUME_PATH_NAMES.get(source, source))}: {message}")
    warnings += _token_path_warnings(spec, spec_path)

    for field, what in (("hostAliases", "ip"), ("imagePullSecrets", "name")):
        seen = set()
        for index, item in enumerate(_dicts(spec.get(field))):
            value = item.get(what) or ""
            if value in seen:
                warnings.append(f"{spec_path.child(field).index(index).child(what)}: duplicate "
                                f"{what} {go_quote(value)}")
            seen.add(value)
    for index, item in enumerate(_dicts(spec.get("imagePullSecrets"))):
        if not item.get("name"):
            warnings.append(f"{spec_path.child('imagePullSecrets').index(index).child('name')}:"
                            ' invalid empty name ""')
    warnings += _fractional_warnings(_dict(spec.get("overhead")), spec_path.child("overhead"))

    security = _dict(spec.get("securityContext"))
    if security.get("seccompProfile") is None and SECCOMP_POD_ANNOTATION_KEY in annotations:
        warnings.append(f"{annotations_path.key(SECCOMP_POD_ANNOTATION_KEY)}: {_SECCOMP_MESSAGE}")
    pod_apparmor = security.get("appArmorProfile") is not None
    for container, path in _containers_with_path(spec, spec_path):
        warnings += _container_warnings(container, path, annotations, annotations_path,
                                        template=base is not None, pod_apparmor=pod_apparmor)
    warnings += _port_warnings(spec, spec_path)

    grace = spec.get("terminationGracePeriodSeconds")
    if isinstance(grace, int) and not isinstance(grace, bool) and grace < 0:
        warnings.append(f"{spec_path.child('terminationGracePeriodSeconds')}: must be >= 0; "
                        "negative values are invalid and will be treated as 1")
    affinity = _dict(spec.get("affinity"))
    for kind in ("podAffinity", "podAntiAffinity"):
        rules = _dict(affinity.get(kind))
        required_path = spec_path.child("affinity", kind,
                                        "requiredDuringSchedulingIgnoredDuringExecution")
        for index, term in enumerate(_dicts(
                rules.get("requiredDuringSchedulingIgnoredDuringExecution"))):
            if term.get("labelSelector") is None:
                warnings.append(f"{required_path.index(index).child('labelSelector')}: "
                                f"{_NULL_SELECTOR}")
        preferred_path = spec_path.child("affinity", kind,
                                         "preferredDuringSchedulingIgnoredDuringExecution")
        for index, term in enumerate(_dicts(
                rules.get("preferredDuringSchedulingIgnoredDuringExecution"))):
            if _dict(term.get("podAffinityTerm")).get("labelSelector") is None:
                term_path = preferred_path.index(index).child("podAffinityTerm", "labelSelector")
                warnings.append(f"{term_path}: {_NULL_SELECTOR}")
    return warnings


def _node_selector_term_warnings(term: dict, path: FieldPath) -> list[str]:
    warnings = []
    for index, expression in enumerate(_dicts(term.get("matchExpressions"))):
        key = expression.get("key")
        if key in DEPRECATED_NODE_LABELS:
            warnings.append(f"{path.child('matchExpressions').index(index).child('key')}: "
                            f"{key} is {DEPRECATED_NODE_LABELS[key]}")
    return warnings


def _token_path_warnings(spec: dict, spec_path: FieldPath) -> list[str]:
    """Projected files that share a path with a service account token."""
    volumes = _dicts(spec.get("volumes"))
    token_paths = {_dict(source.get("serviceAccountToken")).get("path")
                   for volume in volumes
                   for source in _dicts(_dict(volume.get("projected")).get("sources"))
                   if source.get("serviceAccountToken") is not None}
    if not token_paths:
        return []
    warnings = []
    for index, volume in enumerate(volumes):
        sources_path = spec_path.child("volumes").index(index).child("projected", "sources")
        for source in _dicts(_dict(volume.get("projected")).get("sources")):
            for kind, name in (("configMap", "configMap"), ("secret", "secrets"),
                               ("downwardAPI", "downwardAPI")):
                for item_index, item in enumerate(_dicts(_dict(source.get(kind)).get("items"))):
                    if item.get("path") in token_paths:
                        warnings.append(f"{sources_path.child(name).index(item_index)}: has "
                                        "duplicated path with ServiceAccountToken "
                                        f"{go_quote(str(item.get('path')))}")
            bundle = source.get("clusterTrustBundle")
            if isinstance(bundle, dict) and bundle.get("path") in token_paths:
                warnings.append(f"{sources_path.child('ClusterTrustBundle')}: has duplicated "
                                "path with ServiceAccountToken "
                                f"{go_quote(str(bundle.get('path')))}")
    return warnings


def _container_warnings(container: dict, path: FieldPath, annotations: dict,
                        annotations_path: FieldPath, template: bool,
                        pod_apparmor: bool) -> list[str]:
    warnings = []
    name = container.get("name") or ""
    context = _dict(container.get("securityContext"))
    seccomp_key = SECCOMP_CONTAINER_ANNOTATION_KEY_PREFIX + name
    if context.get("seccompProfile") is None and seccomp_key in annotations:
        warnings.append(f"{annotations_path.key(seccomp_key)}: {_SECCOMP_MESSAGE}")
    # A Pod's AppArmor annotations are answered as it is created (the version skew);
    # a template's are warned of here.
    apparmor_key = _APPARMOR_PREFIX + name
    if template and not (pod_apparmor or context.get("appArmorProfile") is not None) \
            and apparmor_key in annotations:
        warnings.append(f'{annotations_path.key(apparmor_key)}: deprecated since v1.30; use '
                        'the "appArmorProfile" field instead')
    resources = _dict(container.get("resources"))
    for name_ in ("memory", "ephemeral-storage"):
        for kind in ("limits", "requests"):
            warnings += _fractional_warnings(_dict(resources.get(kind)),
                                             path.child("resources", kind), (name_,))
    seen = set()
    for index, env in enumerate(_dicts(container.get("env"))):
        env_name = env.get("name") or ""
        if env_name not in seen:
            seen.add(env_name)
            continue
        ref = f"$({env_name})"
        value = env.get("value") or ""
        if env.get("valueFrom") is not None or value == ref or ref not in value:
            warnings.append(f"{path.child('env').index(index)}: hides previous definition of "
                            f"{go_quote(env_name)}, which may be dropped when using apply")
    return warnings


def _port_warnings(spec: dict, spec_path: FieldPath) -> list[str]:
    warnings = []
    seen: dict[str, list[tuple[FieldPath, dict]]] = {}
    for container, path in _containers_with_path(spec, spec_path):
        for index, port in enumerate(_dicts(container.get("ports"))):
            here = path.child("ports").index(index)
            if port.get("hostIP") and not port.get("hostPort"):
                warnings.append(f"{here}: hostIP set without hostPort: {_go_port(port)}")
            key = f"{port.get('containerPort') or 0}/{port.get('protocol') or ''}"
            for other_path, other in seen.get(key, []):
                host_ip, other_ip = port.get("hostIP") or "", other.get("hostIP") or ""
                host_port, other_port = port.get("hostPort") or 0, other.get("hostPort") or 0
                if host_ip == other_ip and host_port == other_port:
                    warnings.append(f"{here}: duplicate port definition with {other_path}")
                elif host_port == 0 or other_port == 0:
                    warnings.append(f"{here}: overlapping port definition with {other_path}")
                elif host_port == other_port and (not host_ip) != (not other_ip):
                    warnings.append(f"{here}: dangerously ambiguous port definition with "
                                    f"{other_path}")
            seen.setdefault(key, []).append((here, port))
    return warnings


def pod_warnings(pod: dict) -> list[str]:
    """``GetWarningsForPod`` (a Pod's paths start at ``spec`` and ``metadata``)."""
    return spec_and_meta_warnings(None, _dict(pod.get("spec")), _dict(pod.get("metadata")))


def pod_template_warnings(template: dict, path: FieldPath) -> list[str]:
    """``GetWarningsForPodTemplate``: a template's warnings under ``path``."""
    template = _dict(template)
    return spec_and_meta_warnings(path, _dict(template.get("spec")),
                                  _dict(template.get("metadata")))
