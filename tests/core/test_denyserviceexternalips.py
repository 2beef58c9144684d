"""DenyServiceExternalIPs: no new external IPs, on create or update."""

import pytest

from kapiserver import errors
from kapiserver.admission import UPDATE
from kapiserver_plugins.core.denyserviceexternalips import DenyServiceExternalIPs
from kapiserver_plugins.core.services import SERVICES
from tests.support.admission import Attributes, run

MESSAGE = 'services "web" is forbidden: Use of external IPs is denied by admission control'


def service(*ips):
    spec = {"ports": [{"port": 80}]}
    if ips:
        spec["externalIPs"] = list(ips)
    return {"metadata": {"name": "web", "namespace": "ns"}, "spec": spec}


def test_new_external_ips_are_refused():
    plugin = DenyServiceExternalIPs()
    assert DenyServiceExternalIPs.default_enabled is False
    with pytest.raises(errors.Forbidden) as caught:
        run(plugin, Attributes(SERVICES, service("1.2.3.4"), namespace="ns"))
    assert caught.value.message == MESSAGE
    assert caught.value.details == {"name": "web", "kind": "services"}
    with pytest.raises(errors.Forbidden):
        run(plugin, Attributes(SERVICES, service("1.2.3.4", "5.6.7.8"), UPDATE,
                               old=service("1.2.3.4"), namespace="ns", name="web"))


def test_keeping_or_dropping_them_is_allowed():
    plugin = DenyServiceExternalIPs()
    run(plugin, Attributes(SERVICES, service(), namespace="ns"))
    run(plugin, Attributes(SERVICES, service("5.6.7.8"), UPDATE,
                           old=service("1.2.3.4", "5.6.7.8"), namespace="ns", name="web"))
    run(plugin, Attributes(SERVICES, service("1.2.3.4"), UPDATE, old=service("1.2.3.4"),
                           namespace="ns", name="web", subresource="status"))
