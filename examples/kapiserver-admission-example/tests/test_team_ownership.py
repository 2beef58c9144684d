"""The TeamOwnership admission plugin in a real kapiserver, through the Python client."""

import pytest
from kubernetes import client


def deployment(name, labels=None):
    return client.V1Deployment(
        metadata=client.V1ObjectMeta(name=name, labels=labels),
        spec=client.V1DeploymentSpec(
            selector=client.V1LabelSelector(match_labels={"app": name}),
            template=client.V1PodTemplateSpec(
                metadata=client.V1ObjectMeta(labels={"app": name}),
                spec=client.V1PodSpec(containers=[client.V1Container(name="web",
                                                                     image="nginx")]))))


def test_a_deployment_names_its_team(kapiserver_client, kapiserver_namespace):
    apps = client.AppsV1Api(kapiserver_client)
    with pytest.raises(client.ApiException) as refused:
        apps.create_namespaced_deployment(kapiserver_namespace, deployment("web"))
    assert refused.value.status == 422
    assert '"message":"Deployment.apps \\"web\\" is invalid: metadata.labels[team]: ' \
        'Required value: every Deployment names the team that owns it"' in refused.value.body

    made = apps.create_namespaced_deployment(kapiserver_namespace,
                                             deployment("web", {"team": "payments"}))
    assert made.metadata.annotations == {"example.com/created-by": "admin",
                                         "example.com/team-contact": "payments@example.com"}
    assert made.spec.template.metadata.labels == {"app": "web", "team": "payments"}


def test_only_configured_teams(kapiserver_client, kapiserver_namespace):
    apps = client.AppsV1Api(kapiserver_client)
    with pytest.raises(client.ApiException) as refused:
        apps.create_namespaced_deployment(kapiserver_namespace,
                                          deployment("web", {"team": "marketing"}))
    assert refused.value.status == 422
    assert 'metadata.labels[team]: Unsupported value: \\"marketing\\": supported values: ' \
        '\\"payments\\", \\"search\\"' in refused.value.body


def test_moving_to_another_team_is_for_team_admins(kapiserver, kapiserver_namespace):
    alice = client.AppsV1Api(kapiserver.python_client(user="alice", groups=["devs"]))
    made = alice.create_namespaced_deployment(kapiserver_namespace,
                                              deployment("api", {"team": "search"}))
    assert made.metadata.annotations["example.com/team-contact"] == "search-oncall@example.org"

    move = {"metadata": {"labels": {"team": "payments"},
                         "annotations": {"example.com/created-by": "mallory"}}}
    with pytest.raises(client.ApiException) as refused:
        alice.patch_namespaced_deployment("api", kapiserver_namespace, move)
    assert refused.value.status == 403
    assert ('deployments.apps \\"api\\" is forbidden: only members of team-admins may '
            'move a Deployment to another team (search to payments)') in refused.value.body

    admin = client.AppsV1Api(kapiserver.python_client(user="bob", groups=["team-admins"]))
    moved = admin.patch_namespaced_deployment("api", kapiserver_namespace, move)
    assert moved.metadata.labels["team"] == "payments"
    assert moved.spec.template.metadata.labels["team"] == "payments"
    # Who created it stays whatever an update says; the contact was set, so it stays.
    assert moved.metadata.annotations == {"example.com/created-by": "alice",
                                          "example.com/team-contact":
                                              "search-oncall@example.org"}


def test_dry_run_is_admitted_and_not_recorded(kapiserver, kapiserver_client,
                                              kapiserver_namespace):
    apps = client.AppsV1Api(kapiserver_client)
    answer = apps.create_namespaced_deployment(kapiserver_namespace,
                                               deployment("trial", {"team": "search"}),
                                               dry_run="All")
    assert answer.metadata.annotations["example.com/team-contact"] == \
        "search-oncall@example.org"
    assert apps.list_namespaced_deployment(kapiserver_namespace).items == []
    apps.create_namespaced_deployment(kapiserver_namespace,
                                      deployment("real", {"team": "search"}))
    log = kapiserver.log()
    assert f"deployment {kapiserver_namespace}/real admitted for team search" in log
    assert f"deployment {kapiserver_namespace}/trial" not in log


def test_other_kinds_and_subresources_pass(kapiserver_client, kapiserver_namespace):
    apps = client.AppsV1Api(kapiserver_client)
    apps.create_namespaced_deployment(kapiserver_namespace,
                                      deployment("web", {"team": "payments"}))
    # The scale subresource is not checked (nor are other kinds): no team needed there.
    apps.patch_namespaced_deployment_scale("web", kapiserver_namespace,
                                           {"spec": {"replicas": 3}})
    client.CoreV1Api(kapiserver_client).create_namespaced_config_map(
        kapiserver_namespace, client.V1ConfigMap(metadata=client.V1ObjectMeta(name="c")))
