"""The ``certificates.k8s.io`` API group: CertificateSigningRequests, with their ``status``
and ``approval`` subresources, and the CertificateApproval, CertificateSigning and
CertificateSubjectRestriction admission plugins."""

from kapiserver.admission import CREATE
from kapiserver.endpoints.handlers import RESTHandler
from kapiserver.plugin_manager import hookimpl
from kapiserver.registry.builtin import subresource_info
from kapiserver.server.apigroups import APIGroupInfo, APIGroupInstaller

from .approval import CertificateApproval
from .csrs import CSRS, CSRStrategy, set_requestor
from .signing import CertificateSigning
from .subjectrestriction import CertificateSubjectRestriction


class CSRHandler(RESTHandler):
    """CertificateSigningRequests' handler: a new request records who asked (upstream's
    ``PrepareForCreate`` reads the user from the request context), before admission and
    validation see it."""

    def _admitter(self, ctx, operation, name, dry_run):
        admit = super()._admitter(ctx, operation, name, dry_run)
        if operation != CREATE:
            return admit

        def requested(obj, old=None):
            set_requestor(obj, ctx.user)
            admit(obj, old)

        return requested


class CertificatesV1(APIGroupInstaller):
    """Install ``certificates.k8s.io/v1`` backed by the server's storage."""

    group = "certificates.k8s.io"
    delegate = "kube"

    def install(self, server):
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
