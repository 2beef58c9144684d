"""DenyServiceExternalIPs admission: no new external IPs on Services
(``plugin/pkg/admission/network/denyserviceexternalips``).

``spec.externalIPs`` lets whoever may write a Service claim traffic for any address
(CVE-2020-8554); with this plugin a Service may keep the external IPs it has but not gain
one, on create or update. Off by default, as in kube-apiserver 1.32
(``--enable-admission-plugins=DenyServiceExternalIPs``).
"""

from kapiserver.admission import CREATE, UPDATE, AdmissionPlugin
from kapiserver.admission.helpers import forbidden


def _external_ips(service) -> list:
    spec = service.get("spec") if isinstance(service, dict) else None
    ips = spec.get("externalIPs") if isinstance(spec, dict) else None
    return ips if isinstance(ips, list) else []


class DenyServiceExternalIPs(AdmissionPlugin):
    """Refuse a Service whose external IPs are not all among its previous ones."""

    name = "DenyServiceExternalIPs"
    default_enabled = False
    operations = frozenset({CREATE, UPDATE})

    def __init__(self, server=None):
        self.server = server

    def validate(self, attributes):
        spec = attributes.resource
        if spec.group != "" or spec.resource != "services" or attributes.subresource:
            return
        new_ips = _external_ips(attributes.object)
        if not new_ips:
            return
        old = attributes.old_object
        if old is not None and set(new_ips) <= set(_external_ips(old)):
            return
        raise forbidden(attributes, "Use of external IPs is denied by admission control")
