"""The pod strategy's own rules: grace periods, field selectors, what create and the
subresources keep, and what 1.32's disabled features drop."""

import copy

from kapiserver_plugins.core.pods import disabled
from kapiserver_plugins.core.pods.strategy import PODS, PodStrategy, check_graceful_delete


def pod(**spec):
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": "p", "namespace": "ns", "labels": {"app": "web"}},
            "spec": {"containers": [{"name": "app", "image": "nginx"}], **spec}}


# -- CheckGracefulDelete ----------------------------------------------------------------------

def test_grace_period_of_a_bound_pod_comes_from_the_request_or_the_pod():
    bound = pod(nodeName="n1", terminationGracePeriodSeconds=45)
    assert check_graceful_delete(bound, None) == 45
    assert check_graceful_delete(bound, 5) == 5
    assert check_graceful_delete(bound, -3) == 1
    assert check_graceful_delete(pod(nodeName="n1"), None) == 0


def test_unbound_and_finished_pods_go_at_once():
    assert check_graceful_delete(pod(terminationGracePeriodSeconds=30), None) == 0
    done = pod(nodeName="n1", terminationGracePeriodSeconds=30)
    for phase in ("Succeeded", "Failed"):
        done["status"] = {"phase": phase}
        assert check_graceful_delete(done, 10) == 0


# -- field selectors ---------------------------------------------------------------------------

def test_selectable_fields_are_upstreams():
    obj = pod(nodeName="n1", restartPolicy="Never", schedulerName="s",
              serviceAccountName="sa", hostNetwork=True)
    obj["status"] = {"phase": "Running", "podIPs": [{"ip": "10.0.0.1"}, {"ip": "fd00::1"}],
                     "nominatedNodeName": "n2"}
    assert PodStrategy(PODS).selectable_fields(obj) == {
        "metadata.name": "p", "metadata.namespace": "ns", "spec.nodeName": "n1",
        "spec.host": "n1", "spec.restartPolicy": "Never", "spec.schedulerName": "s",
        "spec.serviceAccountName": "sa", "spec.hostNetwork": "true",
        "status.phase": "Running", "status.podIP": "10.0.0.1",
        "status.nominatedNodeName": "n2"}
    assert PodStrategy(PODS).selectable_fields(pod())["spec.hostNetwork"] == "false"
    assert "status.podIPs" in PODS.selectable_fields


# -- create ----------------------------------------------------------------------------------

def test_create_replaces_the_status_keeping_a_sent_qos_class():
    strategy = PodStrategy(PODS)
    obj = pod()
    obj["status"] = {"phase": "Running", "podIP": "1.2.3.4"}
    strategy.prepare_for_create(obj)
    assert obj["status"] == {"phase": "Pending", "qosClass": "BestEffort"}
    guaranteed = pod(containers=[{"name": "a", "image": "x", "resources": {
        "limits": {"cpu": "1", "memory": "1Gi"}, "requests": {"cpu": "1", "memory": "1Gi"}}}])
    strategy.prepare_for_create(guaranteed)
    assert guaranteed["status"]["qosClass"] == "Guaranteed"
    # GetPodQOS reads the status as sent.
    sent = pod()
    sent["status"] = {"qosClass": "Burstable"}
    strategy.prepare_for_create(sent)
    assert sent["status"]["qosClass"] == "Burstable"


def test_scheduling_gates_make_a_scheduling_gated_condition():
    obj = pod(schedulingGates=[{"name": "wait"}])
    PodStrategy(PODS).prepare_for_create(obj)
    assert obj["status"]["conditions"] == [{
        "type": "PodScheduled", "status": "False", "lastProbeTime": None,
        "lastTransitionTime": None, "reason": "SchedulingGated",
        "message": "Scheduling is blocked due to non-empty scheduling gates"}]


def test_match_label_keys_join_the_affinity_selector():
    term = {"labelSelector": {"matchLabels": {"tier": "x"}}, "topologyKey": "zone",
            "matchLabelKeys": ["app", "missing"], "mismatchLabelKeys": ["app"]}
    obj = pod(affinity={"podAntiAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": [term],
        "preferredDuringSchedulingIgnoredDuringExecution": [
            {"weight": 1, "podAffinityTerm": {"topologyKey": "zone",
                                              "matchLabelKeys": ["app"]}}]}})
    disabled.mutate_pod_affinity(obj)
    anti = obj["spec"]["affinity"]["podAntiAffinity"]
    assert anti["requiredDuringSchedulingIgnoredDuringExecution"][0]["labelSelector"] == {
        "matchLabels": {"tier": "x"},
        "matchExpressions": [{"key": "app", "operator": "In", "values": ["web"]},
                             {"key": "app", "operator": "NotIn", "values": ["web"]}]}
    # A term without a selector selects nothing: nothing is merged into it.
    assert "labelSelector" not in \
        anti["preferredDuringSchedulingIgnoredDuringExecution"][0]["podAffinityTerm"]


def test_app_armor_annotations_and_fields_are_kept_in_step():
    obj = pod(securityContext={"appArmorProfile": {"type": "RuntimeDefault"}})
    assert disabled.apply_app_armor_version_skew(obj) == []
    assert obj["metadata"]["annotations"] == {
        "container.apparmor.security.beta.kubernetes.io/app": "runtime/default"}
    annotated = pod()
    annotated["metadata"]["annotations"] = {
        "container.apparmor.security.beta.kubernetes.io/app": "localhost/prof"}
    warnings = disabled.apply_app_armor_version_skew(annotated)
    assert annotated["spec"]["containers"][0]["securityContext"] == {
        "appArmorProfile": {"type": "Localhost", "localhostProfile": "prof"}}
    assert warnings == ['metadata.annotations[container.apparmor.security.beta.kubernetes.io'
                        '/app]: deprecated since v1.30; use the "appArmorProfile" field instead']


def test_disabled_features_fields_are_dropped_unless_in_use():
    spec = {"containers": [{"name": "a", "image": "x", "resizePolicy": [{"resourceName": "cpu"}],
                            "securityContext": {"procMount": "Unmasked"},
                            "resources": {"claims": [{"name": "c"}]},
                            "volumeMounts": [{"name": "img", "mountPath": "/i"},
                                             {"name": "v", "mountPath": "/v"}]}],
            "securityContext": {"hostUsers": False, "supplementalGroupsPolicy": "Strict",
                                "seLinuxChangePolicy": "Recursive", "runAsUser": 1},
            "resources": {"limits": {"cpu": "1"}},
            "resourceClaims": [{"name": "c"}],
            "volumes": [{"name": "img", "image": {"reference": "x"}},
                        {"name": "v", "projected": {"sources": [
                            {"clusterTrustBundle": {"path": "a"}}, {"configMap": {}}]}}]}
    new = copy.deepcopy(spec)
    disabled.drop_disabled_pod_spec_fields(new, None)
    assert new == {
        "containers": [{"name": "a", "image": "x", "securityContext": {"procMount": "Default"},
                        "resources": {}, "volumeMounts": [{"name": "v", "mountPath": "/v"}]}],
        "securityContext": {"runAsUser": 1},
        "volumes": [{"name": "v", "projected": {"sources": [{}, {"configMap": {}}]}}]}
    kept = copy.deepcopy(spec)
    disabled.drop_disabled_pod_spec_fields(kept, copy.deepcopy(spec))
    assert kept == spec


def test_disabled_status_fields_are_dropped():
    obj = pod()
    obj["status"] = {"resize": "InProgress", "resourceClaimStatuses": [{"name": "c"}],
                     "containerStatuses": [{"name": "app", "resources": {},
                                            "allocatedResources": {"cpu": "1"},
                                            "allocatedResourcesStatus": [], "user": {},
                                            "ready": True}]}
    disabled.drop_disabled_pod_fields(obj, None)
    assert obj["status"] == {"containerStatuses": [{"name": "app", "ready": True}]}


# -- subresources ------------------------------------------------------------------------------

def test_status_writes_keep_the_spec_and_owner_references_and_backfill_qos():
    strategy = PodStrategy(PODS)
    old = pod(nodeName="n1")
    old["metadata"]["ownerReferences"] = [{"apiVersion": "v1", "kind": "X", "name": "o",
                                           "uid": "u"}]
    old["status"] = {"phase": "Pending", "qosClass": "BestEffort"}
    new = pod(nodeName="other")
    new["metadata"]["labels"] = {"app": "changed"}
    new["status"] = {"phase": "Running"}
    strategy.status_strategy().prepare_for_update(new, old)
    assert new["spec"]["nodeName"] == "n1"
    assert new["metadata"]["ownerReferences"] == old["metadata"]["ownerReferences"]
    assert new["metadata"]["labels"] == {"app": "changed"}
    assert new["status"] == {"phase": "Running", "qosClass": "BestEffort"}


def test_ephemeral_container_writes_change_nothing_else():
    strategy = PodStrategy(PODS)
    old = pod(nodeName="n1")
    old["status"] = {"phase": "Pending", "qosClass": "BestEffort"}
    new = copy.deepcopy(old)
    new["metadata"]["labels"] = {"app": "changed"}
    new["spec"]["nodeName"] = "other"
    new["spec"]["ephemeralContainers"] = [{"name": "debug", "image": "busybox"}]
    new["status"] = {"phase": "Running"}
    strategy.ephemeral_containers_strategy().prepare_for_update(new, old)
    assert new["metadata"]["labels"] == {"app": "web"}
    assert new["spec"]["nodeName"] == "n1"
    assert new["status"] == old["status"]
    assert new["spec"]["ephemeralContainers"][0]["name"] == "debug"


def test_deletion_is_pending_while_a_grace_period_runs():
    strategy = PodStrategy(PODS)
    obj = pod()
    obj["metadata"].update(deletionTimestamp="2026-01-01T00:00:00Z",
                           deletionGracePeriodSeconds=30)
    assert strategy.deletion_pending(obj)
    obj["metadata"]["deletionGracePeriodSeconds"] = 0
    assert not strategy.deletion_pending(obj)
    obj["metadata"]["finalizers"] = ["x"]
    assert strategy.deletion_pending(obj)
