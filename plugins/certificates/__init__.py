"""The ``certificates.k8s.io`` API group: CertificateSigningRequests, with their ``status``
and ``approval`` subresources, and the CertificateApproval, CertificateSigning and
CertificateSubjectRestriction admission plugins."""

from kapiserver.plugin_manager import hookimpl
from kapiserver.registry.builtin import subresource_info
from kapiserver.server.apigroups import APIGroupInfo, APIGroupInstaller

from .approval import CertificateApproval
from .csrs import CSRS, CSRStrategy
from .signing import CertificateSigning
from .subjectrestriction import CertificateSubjectRestriction


class CertificatesV1(APIGroupInstaller):
    """Install ``certificates.k8s.io/v1`` backed by the server's storage."""

    group = "certificates.k8s.io"
    delegate = "kube"

    def install(self, server):
        from .handlers import CSRHandler

        strategy = CSRStrategy(CSRS)
        base = server.rest_handler(CSRS, strategy)
        handlers = {CSRS.resource: CSRHandler(base.store, server, base.verbs)}
        for subresource, sub_strategy in (("status", strategy.status_strategy()),
                                          ("approval", strategy.approval_strategy())):
            verbs = tuple(subresource_info(CSRS, subresource)["verbs"])
            handlers[f"{CSRS.resource}/{subresource}"] = server.rest_handler(
                CSRS, sub_strategy, subresource, verbs)
        return APIGroupInfo(self.group, {"v1": handlers})


@hookimpl
def kapiserver_api_groups(config):
    return [CertificatesV1()]


@hookimpl
def kapiserver_admission_plugins(config):
    return {"CertificateApproval": CertificateApproval,
            "CertificateSigning": CertificateSigning,
            "CertificateSubjectRestriction": CertificateSubjectRestriction}
