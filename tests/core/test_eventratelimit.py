"""EventRateLimit: token buckets per server, namespace, user and source+object; 429s
worded as upstream's; its configuration checked at start."""

import pytest

from kapiserver import errors
from kapiserver.admission import UPDATE
from kapiserver.authentication import UserInfo
from kapiserver.errors import ConfigError
from kapiserver_plugins.core.eventratelimit import (EventRateLimit, TokenBucket,
                                                    parse_configuration)
from kapiserver_plugins.core.events import EVENTS
from kapiserver_plugins.core.pods import PODS
from tests.support.admission import Attributes, Config

API_VERSION = "eventratelimit.admission.k8s.io/v1alpha1"


class Clock:
    def __init__(self):
        self.now = 0.0

    def __call__(self):
        return self.now


def plugin(tmp_path, clock, *limits):
    config = tmp_path / "admission.yaml"
    config.write_text(
        "apiVersion: apiserver.config.k8s.io/v1\nkind: AdmissionConfiguration\nplugins:\n"
        f"- name: EventRateLimit\n  configuration:\n    apiVersion: {API_VERSION}\n"
        f"    kind: Configuration\n    limits: {list(limits)!r}\n")
    server = type("Server", (), {})()
    server.config = Config(admission_control_config_file=str(config))
    return EventRateLimit(server, clock=clock)


def event(namespace="ns", component="kubelet", name="web"):
    return {"metadata": {"name": "e", "namespace": namespace},
            "involvedObject": {"kind": "Pod", "namespace": namespace, "name": name},
            "source": {"component": component}}


def write(plugin, obj, user="alice", **kwargs):
    plugin.validate(Attributes(EVENTS, obj, namespace=obj["metadata"]["namespace"],
                               user=UserInfo(user), **kwargs))


def refused(plugin, obj, **kwargs) -> str:
    with pytest.raises(errors.TooManyRequests) as caught:
        write(plugin, obj, **kwargs)
    assert caught.value.to_status()["code"] == 429 and caught.value.details is None
    return caught.value.message


def test_a_namespace_limit_refills_at_its_rate(tmp_path):
    clock = Clock()
    limited = plugin(tmp_path, clock, {"type": "Namespace", "qps": 1, "burst": 2})
    write(limited, event())
    write(limited, event())
    assert refused(limited, event()) == \
        "Too many requests: Too many requests: limit reached on type Namespace for key ns"
    write(limited, event("other"))  # another namespace has its own bucket
    clock.now = 1.0
    write(limited, event(), operation=UPDATE, old=event())
    assert refused(limited, event())


def test_every_limit_is_charged_and_reported(tmp_path):
    clock = Clock()
    limited = plugin(tmp_path, clock, {"type": "Server", "qps": 1, "burst": 1},
                     {"type": "User", "qps": 1, "burst": 1},
                     {"type": "SourceAndObject", "qps": 1, "burst": 5})
    write(limited, event())
    assert refused(limited, event(), user="bob") == (
        "Too many requests: Too many requests: limit reached on type Server for key ")
    assert refused(limited, event()) == (
        "Too many requests: [Too many requests: limit reached on type Server for key , "
        "Too many requests: limit reached on type User for key alice]")


def test_dry_runs_and_other_kinds_are_not_counted(tmp_path):
    limited = plugin(tmp_path, Clock(), {"type": "Server", "qps": 1, "burst": 1})
    dry = Attributes(EVENTS, event(), namespace="ns")
    dry.dry_run = True
    limited.validate(dry)
    limited.validate(Attributes(PODS, {"metadata": {"name": "p"}}, namespace="ns"))
    write(limited, event())
    assert refused(limited, event())


def test_the_configuration_is_required_and_checked():
    with pytest.raises(ConfigError, match="a configuration .* is required"):
        parse_configuration(None)
    with pytest.raises(ConfigError) as caught:
        parse_configuration({"apiVersion": API_VERSION, "kind": "Configuration",
                             "limits": [{"type": "Pod", "qps": 0, "burst": 1,
                                         "cacheSize": -1}]})
    assert caught.value.errors == [
        '--admission-control-config-file: EventRateLimit: limits[0].type: Unsupported value: '
        '"Pod": supported values: "Namespace", "Server", "SourceAndObject", "User"',
        "--admission-control-config-file: EventRateLimit: limits[0].qps: Invalid value: 0: "
        "must be positive",
        "--admission-control-config-file: EventRateLimit: limits[0].cacheSize: Invalid value: "
        "-1: must not be negative"]
    assert parse_configuration({"apiVersion": API_VERSION, "kind": "Configuration",
                                "limits": [{"type": "User", "qps": 5, "burst": 10}]}) == [
        {"type": "User", "qps": 5, "burst": 10, "cacheSize": 0}]


def test_token_buckets_start_full():
    clock = Clock()
    bucket = TokenBucket(2, 3, clock)
    assert [bucket.try_accept() for _ in range(4)] == [True, True, True, False]
    clock.now = 0.5
    assert [bucket.try_accept() for _ in range(2)] == [True, False]
