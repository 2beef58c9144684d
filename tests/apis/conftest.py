"""Helpers for the pod-spec tests: a valid defaulted pod and error texts."""

import copy

import pytest

from kapiserver.apis.core import defaults


def make_pod(**spec):
    """A valid Pod as kube-apiserver would have it after defaulting, ``spec`` merged in."""
    pod = {"apiVersion": "v1", "kind": "Pod",
           "metadata": {"name": "p", "namespace": "ns"},
           "spec": {"serviceAccountName": "default",
                    "containers": [{"name": "c", "image": "nginx"}]}}
    pod["spec"].update(copy.deepcopy(spec))
    defaults.set_pod_defaults(pod)
    return pod


def texts(errors):
    """The errors as upstream's ``Error()`` prints them."""
    return [error.error_text() for error in errors]


@pytest.fixture
def pod():
    return make_pod()
