"""DefaultTolerationSeconds: the two NoExecute tolerations pods get, and those they keep."""

from kapiserver.admission import CREATE, UPDATE
from kapiserver_plugins.core.defaulttolerationseconds import DefaultTolerationSeconds
from kapiserver_plugins.core.pods import PODS
from tests.support.admission import Attributes, Config, run

NOT_READY = {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute",
             "tolerationSeconds": 300}
UNREACHABLE = {"key": "node.kubernetes.io/unreachable", "operator": "Exists",
               "effect": "NoExecute", "tolerationSeconds": 300}


class Server:
    def __init__(self, not_ready=300, unreachable=300):
        self.config = Config(default_not_ready_toleration_seconds=not_ready,
                             default_unreachable_toleration_seconds=unreachable)


def pod(**spec):
    return {"metadata": {"name": "p"}, "spec": {
        "containers": [{"name": "app", "image": "nginx"}], "restartPolicy": "Always",
        "schedulerName": "default-scheduler", "enableServiceLinks": True, **spec}}


def test_a_pod_gets_both_tolerations_where_go_writes_them():
    obj = pod()
    run(DefaultTolerationSeconds(Server()), Attributes(PODS, obj))
    assert obj["spec"]["tolerations"] == [NOT_READY, UNREACHABLE]
    assert list(obj["spec"]) == ["containers", "restartPolicy", "schedulerName", "tolerations",
                                 "enableServiceLinks"]


def test_the_seconds_come_from_the_options():
    obj = pod()
    run(DefaultTolerationSeconds(Server(60, 0)), Attributes(PODS, obj))
    assert [t["tolerationSeconds"] for t in obj["spec"]["tolerations"]] == [60, 0]


def test_tolerations_the_pod_has_are_kept_and_count():
    own = {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute",
           "tolerationSeconds": 10}
    obj = pod(tolerations=[own])
    run(DefaultTolerationSeconds(Server()), Attributes(PODS, obj))
    assert obj["spec"]["tolerations"] == [own, UNREACHABLE]
    # An empty key tolerates every taint; an empty effect every effect.
    for everything in ({"operator": "Exists"}, {"operator": "Exists", "effect": "NoExecute"}):
        obj = pod(tolerations=[everything])
        run(DefaultTolerationSeconds(Server()), Attributes(PODS, obj, UPDATE, old=pod()))
        assert obj["spec"]["tolerations"] == [everything]
    # Another effect does not count.
    no_schedule = {"key": "node.kubernetes.io/unreachable", "operator": "Exists",
                   "effect": "NoSchedule"}
    obj = pod(tolerations=[no_schedule])
    run(DefaultTolerationSeconds(Server()), Attributes(PODS, obj))
    assert obj["spec"]["tolerations"] == [no_schedule, NOT_READY, UNREACHABLE]


def test_only_pods_themselves():
    obj = pod()
    run(DefaultTolerationSeconds(Server()), Attributes(PODS, obj, subresource="status"))
    assert "tolerations" not in obj["spec"]
    assert not DefaultTolerationSeconds(Server()).handles("DELETE")
    assert DefaultTolerationSeconds(Server()).handles(CREATE)
