"""The garbage collector's dependency graph, built from changes without a server."""

from kapiserver_plugins.garbagecollector.graph import (Graph, Identity, Observed, OwnerRef,
                                                       WorkQueue, alternate_owner_identity,
                                                       owner_refs, partition_dependents,
                                                       references_diffs)


def meta(name, uid, namespace="ns", owners=(), deleting=False, finalizers=()):
    result = {"name": name, "uid": uid}
    if namespace:
        result["namespace"] = namespace
    if owners:
        result["ownerReferences"] = [
            {"apiVersion": o.api_version, "kind": o.kind, "name": o.name, "uid": o.uid,
             **({"blockOwnerDeletion": o.block} if o.block is not None else {})}
            for o in owners]
    if deleting:
        result["deletionTimestamp"] = "2024-01-01T00:00:00Z"
    if finalizers:
        result["finalizers"] = list(finalizers)
    return result


def seen(m, kind="ConfigMap", api_version="v1"):
    return Observed.from_meta(api_version, kind, m)


def drain(queue):
    keys = []
    while (key := queue.pop()) is not None:
        keys.append(key)
    return keys


def owner_ref(name, uid, block=None, kind="ConfigMap"):
    return OwnerRef("v1", kind, name, uid, None, block)


def test_an_owner_not_yet_observed_is_virtual_and_verified():
    graph = Graph()
    graph.observe(seen(meta("dep", "d1", owners=[owner_ref("owner", "o1")])), "/registry/x/dep")
    owner = graph.nodes["o1"]
    assert owner.virtual and owner.identity == Identity("v1", "ConfigMap", "owner", "o1", "ns")
    assert owner.dependents == {graph.nodes["d1"]}
    assert drain(graph.attempt_to_delete) == ["o1"]
    # Observing it makes it real; nothing else to verify.
    graph.observe(seen(meta("owner", "o1")), "/registry/x/owner")
    assert not graph.nodes["o1"].virtual
    assert drain(graph.attempt_to_delete) == []


def test_an_owner_observed_in_another_namespace_is_reported():
    reports = []
    graph = Graph(report=lambda node, ref: reports.append((node.identity.name, ref.uid)))
    graph.observe(seen(meta("owner", "o1", namespace="a")))
    graph.observe(seen(meta("dep", "d1", namespace="b", owners=[owner_ref("owner", "o1")])))
    assert reports == [("dep", "o1")]
    assert drain(graph.attempt_to_delete) == ["d1"]  # verified live: the owner is absent
    # The other order: the dependent first, its owner observed later.
    graph = Graph(report=lambda node, ref: reports.append((node.identity.name, ref.uid)))
    reports.clear()
    graph.observe(seen(meta("dep", "d1", namespace="b", owners=[owner_ref("owner", "o1")])))
    drain(graph.attempt_to_delete)
    graph.observe(seen(meta("owner", "o1", namespace="a")))
    assert reports == [("dep", "o1")]
    assert drain(graph.attempt_to_delete) == ["d1"]


def test_a_cluster_scoped_owner_may_own_namespaced_objects():
    reports = []
    graph = Graph(report=lambda node, ref: reports.append(node))
    graph.observe(seen(meta("role", "r1", namespace=""), "ClusterRole",
                       "rbac.authorization.k8s.io/v1"))
    graph.observe(seen(meta("dep", "d1", owners=[OwnerRef(
        "rbac.authorization.k8s.io/v1", "ClusterRole", "role", "r1")])))
    assert reports == [] and drain(graph.attempt_to_delete) == []


def test_the_deletion_of_an_owner_queues_its_dependents_and_is_remembered():
    graph = Graph()
    graph.observe(seen(meta("owner", "o1")), "/registry/x/owner")
    graph.observe(seen(meta("dep", "d1", owners=[owner_ref("owner", "o1")])), "/registry/x/dep")
    graph.observe_deleted("/registry/x/owner")
    assert "o1" not in graph.nodes
    assert drain(graph.attempt_to_delete) == ["d1"]
    assert Identity("v1", "ConfigMap", "owner", "o1", "ns") in graph.absent


def test_deletion_with_finalizers_starts_the_orphaning_or_the_foreground():
    graph = Graph()
    graph.observe(seen(meta("owner", "o1")), "k1")
    graph.observe(seen(meta("dep", "d1", owners=[owner_ref("owner", "o1")])), "k2")
    graph.observe(seen(meta("owner", "o1", deleting=True, finalizers=["orphan"])), "k1")
    assert drain(graph.attempt_to_orphan) == ["o1"]
    graph.observe(seen(meta("owner", "o1", deleting=True, finalizers=["orphan"])), "k1")
    assert drain(graph.attempt_to_orphan) == []  # only the transition counts
    graph = Graph()
    graph.observe(seen(meta("owner", "o1")), "k1")
    graph.observe(seen(meta("dep", "d1", owners=[owner_ref("owner", "o1")])), "k2")
    graph.observe(seen(meta("owner", "o1", deleting=True,
                            finalizers=["foregroundDeletion"])), "k1")
    assert graph.nodes["o1"].deleting_dependents
    assert drain(graph.attempt_to_delete) == ["d1", "o1"]


def test_an_owner_waiting_for_its_dependents_is_queued_when_one_stops_blocking():
    graph = Graph()
    graph.observe(seen(meta("owner", "o1", deleting=True, finalizers=["foregroundDeletion"])),
                  "k1")
    graph.observe(seen(meta("dep", "d1", owners=[owner_ref("owner", "o1", block=True)])), "k2")
    assert graph.nodes["o1"].blocking_dependents() == [graph.nodes["d1"]]
    drain(graph.attempt_to_delete)
    graph.observe(seen(meta("dep", "d1", owners=[owner_ref("owner", "o1", block=False)])), "k2")
    assert drain(graph.attempt_to_delete) == ["o1"]
    assert graph.nodes["o1"].blocking_dependents() == []
    graph.observe_deleted("k2")
    assert drain(graph.attempt_to_delete) == ["o1"]  # a dependent gone: look again


def test_a_name_reused_by_another_object_replaces_the_node():
    graph = Graph()
    graph.observe(seen(meta("cm", "u1")), "k")
    graph.observe(seen(meta("cm", "u2")), "k")
    assert set(graph.nodes) == {"u2"} and graph.by_key["k"].uid == "u2"


def test_a_virtual_owner_verified_absent_under_other_coordinates_is_kept_for_the_others():
    graph = Graph()
    graph.observe(seen(meta("a", "d1", owners=[owner_ref("owner", "o1")])))
    graph.observe(seen(meta("b", "d2", owners=[owner_ref("owner", "o1", kind="Secret")])))
    drain(graph.attempt_to_delete)
    graph.virtual_delete(Identity("v1", "ConfigMap", "owner", "o1", "ns"))
    # The dependents naming those coordinates are checked; the node now stands for the
    # other ones, checked again later.
    assert graph.nodes["o1"].identity.kind == "Secret"
    assert drain(graph.attempt_to_delete) == ["d1"]
    assert Identity("v1", "ConfigMap", "owner", "o1", "ns") in graph.absent


def test_helpers():
    old = (owner_ref("a", "1"), owner_ref("b", "2", block=True))
    new = (owner_ref("b", "2", block=False), owner_ref("c", "3"))
    added, removed, changed = references_diffs(old, new)
    assert (added, removed, changed) == ([new[1]], [old[0]], [(old[1], new[0])])
    assert owner_refs({"ownerReferences": [{"uid": ""}, "x", {"uid": "u", "kind": "K",
                                                               "controller": "yes"}]}) == (
        OwnerRef("", "K", "", "u", None, None),)
    graph = Graph()
    graph.observe(seen(meta("x", "d1", owners=[owner_ref("o", "1")])))
    graph.observe(seen(meta("y", "d2", namespace="other", owners=[owner_ref("o", "1")])))
    dependents = graph.nodes["1"].dependents
    matching, nonmatching = partition_dependents(dependents, Identity("v1", "ConfigMap", "o",
                                                                      "1", "ns"))
    assert [d.uid for d in matching] == ["d1"] and [d.uid for d in nonmatching] == ["d2"]
    assert alternate_owner_identity(dependents, Identity("v1", "ConfigMap", "o", "1", "ns")) \
        == Identity("v1", "ConfigMap", "o", "1", "other")


def test_the_work_queue_gives_each_key_once_in_order_and_retries_later():
    queue = WorkQueue()
    for key in ("a", "b", "a", "c"):
        queue.add(key)
    assert drain(queue) == ["a", "b", "c"]
    first = queue.add_rate_limited("a")
    assert queue.pop() is None and 0 < queue.next_due() <= first
    second = queue.add_rate_limited("a")
    assert second == 2 * first
    queue.forget("a")
    assert queue.add_rate_limited("a") == first
