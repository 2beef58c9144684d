"""The namespace controller's pass over a namespace's content (upstream's
``deleteAllContent``) and the status conditions it leaves, with content providers that
keep their objects in memory."""

import pytest

from kapiserver.controllers.namespace_content import (ContentError, ContentResource,
                                                      NamespaceContent,
                                                      discovery_failure_message,
                                                      stale_group_version)
from kapiserver_plugins.core.namespace_conditions import (CONDITION_TYPES, ConditionUpdater)
from kapiserver_plugins.core.namespace_controller import FINALIZER_ESTIMATE, delete_all_content

FLUNDERS = ContentResource("wardle.example.com", "v1alpha1", "flunders",
                           frozenset({"create", "delete", "deletecollection", "get", "list"}))
WIDGETS = ContentResource("example.com", "v1", "widgets",
                          frozenset({"delete", "get", "list"}))
READ_ONLY = ContentResource("example.com", "v1", "reports", frozenset({"get", "list"}))


class MemoryContent(NamespaceContent):
    """Objects per resource; finalizers keep an object (marked deleted) in place."""

    def __init__(self, objects, failures=None, refuse=None, immortal=False):
        self.objects = objects  # resource -> {name: finalizers}
        self.failures = failures or {}
        self.refuse = refuse  # a message every deletion fails with
        self.immortal = immortal  # deletions are accepted but change nothing
        self.calls = []

    def discover(self):
        return list(self.objects), dict(self.failures)

    def _delete(self, resource, name):
        if self.refuse:
            raise ContentError(self.refuse)
        if not self.immortal and not self.objects[resource][name]:
            del self.objects[resource][name]

    def delete_collection(self, resource, namespace):
        self.calls.append(("deletecollection", resource.resource))
        for name in list(self.objects[resource]):
            self._delete(resource, name)
        return True

    def list(self, resource, namespace):
        self.calls.append(("list", resource.resource))
        return [{"metadata": {"name": name, "finalizers": finalizers}}
                for name, finalizers in self.objects[resource].items()]

    def delete(self, resource, namespace, name):
        self.calls.append(("delete", name))
        self._delete(resource, name)


def conditions(result):
    namespace = {"metadata": {"name": "doomed"}}
    result.conditions.update(namespace)
    return {c["type"]: c for c in namespace["status"]["conditions"]}


def test_everything_deleted_leaves_every_condition_false_as_upstream_words_it():
    content = MemoryContent({FLUNDERS: {"f1": []}, WIDGETS: {"w1": [], "w2": []},
                             READ_ONLY: {"r1": []}})
    result = delete_all_content([content], "doomed")
    assert (result.estimate, result.errors) == (0, [])
    # deletecollection where listed, else list and delete each; no delete verb: left alone.
    assert content.calls == [("deletecollection", "flunders"), ("list", "flunders"),
                             ("list", "widgets"), ("delete", "w1"), ("delete", "w2"),
                             ("list", "widgets")]
    assert content.objects == {FLUNDERS: {}, WIDGETS: {}, READ_ONLY: {"r1": []}}
    got = conditions(result)
    assert list(got) == list(CONDITION_TYPES)
    assert {kind: (c["status"], c["reason"], c["message"]) for kind, c in got.items()} == {
        "NamespaceDeletionDiscoveryFailure": (
            "False", "ResourcesDiscovered", "All resources successfully discovered"),
        "NamespaceDeletionGroupVersionParsingFailure": (
            "False", "ParsedGroupVersions", "All legacy kube types successfully parsed"),
        "NamespaceDeletionContentFailure": (
            "False", "ContentDeleted",
            "All content successfully deleted, may be waiting on finalization"),
        "NamespaceContentRemaining": ("False", "ContentRemoved",
                                      "All content successfully removed"),
        "NamespaceFinalizersRemaining": ("False", "ContentHasNoFinalizers",
                                         "All content-preserving finalizers finished")}


def test_objects_held_by_finalizers_are_waited_for_and_reported():
    content = MemoryContent({FLUNDERS: {"f1": ["example.com/keep"], "f2": []},
                             WIDGETS: {"w1": ["example.com/keep", "other/hold"]}})
    result = delete_all_content([content], "doomed")
    assert (result.estimate, result.errors) == (FINALIZER_ESTIMATE, [])
    got = conditions(result)
    assert got["NamespaceContentRemaining"]["status"] == "True"
    assert got["NamespaceContentRemaining"]["reason"] == "SomeResourcesRemain"
    assert got["NamespaceContentRemaining"]["message"] == (
        "Some resources are remaining: flunders.wardle.example.com has 1 resource instances, "
        "widgets.example.com has 1 resource instances")
    assert got["NamespaceFinalizersRemaining"]["reason"] == "SomeFinalizersRemain"
    assert got["NamespaceFinalizersRemaining"]["message"] == (
        "Some content in the namespace has finalizers remaining: example.com/keep in 2 "
        "resource instances, other/hold in 1 resource instances")


def test_a_group_that_cannot_be_discovered_fails_the_pass_but_the_rest_is_deleted():
    gv = "wardle.example.com/v1alpha1"
    down = MemoryContent({}, failures={gv: stale_group_version(gv)})
    local = MemoryContent({WIDGETS: {"w1": []}})
    result = delete_all_content([local, down], "doomed")
    message = ("unable to retrieve the complete list of server APIs: "
               "wardle.example.com/v1alpha1: stale GroupVersion discovery: "
               "wardle.example.com/v1alpha1")
    assert discovery_failure_message({gv: stale_group_version(gv)}) == message
    assert result.errors == [message]
    assert local.objects == {WIDGETS: {}}
    got = conditions(result)
    assert (got["NamespaceDeletionDiscoveryFailure"]["status"],
            got["NamespaceDeletionDiscoveryFailure"]["reason"],
            got["NamespaceDeletionDiscoveryFailure"]["message"]) == (
        "True", "DiscoveryFailed", "Discovery failed for some groups, 1 failing: " + message)


def test_refused_deletions_and_objects_that_stay_are_content_failures():
    refused = MemoryContent({FLUNDERS: {"f1": []}}, refuse='flunders "f1" is forbidden')
    stubborn = MemoryContent({WIDGETS: {"w1": []}}, immortal=True)
    result = delete_all_content([refused, stubborn], "doomed")
    unexpected = ("unexpected items still remain in namespace: doomed for gvr: "
                  "example.com/v1, Resource=widgets")
    assert result.errors == ['flunders "f1" is forbidden', unexpected]
    failure = conditions(result)["NamespaceDeletionContentFailure"]
    assert (failure["status"], failure["reason"]) == ("True", "ContentDeletionFailed")
    # Sorted, as upstream sorts them.
    assert failure["message"] == ("Failed to delete all resource types, 2 remaining: "
                                  f'flunders "f1" is forbidden, {unexpected}')


def test_conditions_change_only_when_their_trouble_does():
    namespace = {"metadata": {"name": "doomed"}}
    failing = ConditionUpdater()
    failing.discovery_failed(1, "boom")
    assert failing.update(namespace) is True
    first = {c["type"]: dict(c) for c in namespace["status"]["conditions"]}
    assert failing.update(namespace) is False  # the same again: nothing to write
    fine = ConditionUpdater()
    assert fine.update(namespace) is True
    now = {c["type"]: c for c in namespace["status"]["conditions"]}
    assert now["NamespaceDeletionDiscoveryFailure"]["status"] == "False"
    assert len(namespace["status"]["conditions"]) == len(CONDITION_TYPES)
    # Only a condition whose status flipped gets a new transition time.
    for kind in CONDITION_TYPES[1:]:
        assert now[kind]["lastTransitionTime"] == first[kind]["lastTransitionTime"]


@pytest.mark.parametrize("verbs", [frozenset({"delete", "list"}),
                                   frozenset({"delete", "deletecollection", "list"})])
def test_a_resource_that_cannot_be_listed_is_deleted_as_far_as_possible(verbs):
    resource = ContentResource("example.com", "v1", "things", verbs)
    content = MemoryContent({resource: {"t1": []}})
    content.list = lambda resource, namespace: None  # e.g. 405 from the server
    result = delete_all_content([content], "doomed")
    assert (result.estimate, result.errors) == (0, [])
