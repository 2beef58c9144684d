"""The REST handler of CertificateSigningRequests (imported when the group installs: the
web layer stays out of the gunicorn master)."""

from kapiserver.admission import CREATE
from kapiserver.endpoints.handlers import RESTHandler

from .csrs import set_requestor


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
