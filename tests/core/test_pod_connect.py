"""What pods' kubelet subresources check before any kubelet is asked."""

import errno
import socket

import pytest
from werkzeug.datastructures import MultiDict

from kapiserver import errors
from kapiserver_plugins.core.pods.connect import (Kubelets, LogHandler, dial_error,
                                                  split_scheme_name_port)


class Nodes:
    def __init__(self, *nodes):
        self.nodes = {n["metadata"]["name"]: n for n in nodes}

    def get(self, namespace, name):
        if name not in self.nodes:
            raise errors.NotFound.for_object("", "nodes", name)
        return self.nodes[name]


class Server:
    def __init__(self, *nodes):
        self.registries = {("", "nodes"): Nodes(*nodes)}


def node(name, addresses=(), port=0):
    return {"metadata": {"name": name},
            "status": {"addresses": list(addresses),
                       "daemonEndpoints": {"kubeletEndpoint": {"Port": port}}}}


def test_the_kubelet_address_follows_the_preferred_types():
    kubelets = Kubelets(Server(
        node("a", [{"type": "ExternalIP", "address": "1.1.1.1"},
                   {"type": "InternalIP", "address": "10.0.0.1"}]),
        node("b", [{"type": "Hostname", "address": "b.local"},
                   {"type": "InternalIP", "address": "10.0.0.2"}], 10255),
        node("c", [{"type": "Other", "address": "x"}, {"type": "Weird", "address": "y"}]),
        node("d")), pods=None)
    assert kubelets.location("a") == ("10.0.0.1", 10250)
    assert kubelets.location("b") == ("b.local", 10255)
    with pytest.raises(errors.Unknown) as err:
        kubelets.location("c")
    assert err.value.message == "no preferred addresses found; known addresses: " \
                                "[{Other x} {Weird y}]"
    with pytest.raises(errors.Unknown) as err:
        kubelets.location("d")
    assert err.value.to_status() == {"kind": "Status", "apiVersion": "v1", "metadata": {},
                                     "status": "Failure",
                                     "message": "no preferred addresses found; known "
                                                "addresses: []", "code": 500}
    with pytest.raises(errors.NotFound):
        kubelets.location("e")
    unserved = Kubelets(type("NoNodes", (), {"registries": {}})(), None)
    with pytest.raises(errors.NotFound) as err:
        unserved.location("a")
    assert err.value.message == 'nodes "a" not found'


def test_containers_are_named_or_the_only_one():
    pod = {"metadata": {"name": "p"},
           "spec": {"initContainers": [{"name": "init"}],
                    "containers": [{"name": "a"}, {"name": "b"}],
                    "ephemeralContainers": [{"name": "debug"}]}}
    with pytest.raises(errors.BadRequest) as err:
        Kubelets.container(pod, "")
    assert err.value.message == "a container name must be specified for pod p, choose one " \
                                "of: [init a b debug]"
    assert Kubelets.container(pod, "debug") == "debug"
    with pytest.raises(errors.BadRequest) as err:
        Kubelets.container(pod, "zzz")
    assert err.value.message == "container zzz is not valid for pod p"
    single = {"metadata": {"name": "p"}, "spec": {"containers": [{"name": "only"}]}}
    assert Kubelets.container(single, "") == "only"


def test_log_options_are_validated_as_upstream():
    with pytest.raises(errors.Invalid) as err:
        LogHandler.options("p", MultiDict({"sinceSeconds": "5", "sinceTime": "x",
                                           "stream": "All"}))
    assert err.value.message == (
        'PodLogOptions "p" is invalid: [[]: Forbidden: at most one of `sinceTime` or '
        '`sinceSeconds` may be specified, stream: Forbidden: may not be specified]')
    with pytest.raises(errors.Invalid) as err:
        LogHandler.options("p", MultiDict({"sinceSeconds": "0"}))
    assert err.value.details["causes"] == [{"reason": "FieldValueInvalid",
                                            "message": "Invalid value: 0: must be greater "
                                                       "than 0", "field": "sinceSeconds"}]
    options = LogHandler.options("p", MultiDict({"follow": "yes", "previous": "false",
                                                 "tailLines": "10", "timestamps": "1"}))
    assert LogHandler.query(options) == "follow=true&tailLines=10&timestamps=true"


def test_go_dial_errors():
    refused = ConnectionRefusedError(errno.ECONNREFUSED, "Connection refused")
    assert dial_error("10.0.0.1", 10250, refused) == \
        "dial tcp 10.0.0.1:10250: connect: connection refused"
    assert dial_error("fd00::1", 10250, socket.timeout()) == "dial tcp [fd00::1]:10250: i/o timeout"
    assert dial_error("nowhere", 1, socket.gaierror(-2, "x")) == \
        "dial tcp: lookup nowhere: no such host"


def test_proxy_ids():
    assert split_scheme_name_port("web") == ("", "web", "")
    assert split_scheme_name_port("web:80") == ("", "web", "80")
    assert split_scheme_name_port("https:web:443") == ("https", "web", "443")
    assert split_scheme_name_port("ftp:web:21") is None
    assert split_scheme_name_port(":80") is None
    assert split_scheme_name_port("a:b:c:d") is None
