"""The REST handler of policies and bindings: a write is refused when its author may not
read the params it names (imported when the group installs: the web layer stays out of
the gunicorn master)."""

from __future__ import annotations

from kapiserver.admission import CREATE, UPDATE
from kapiserver.apimachinery.field_errors import FieldError, FieldPath, new_invalid
from kapiserver.authentication import SYSTEM_PRIVILEGED_GROUP
from kapiserver.endpoints.handlers import RESTHandler

from .authz import ParamAuthorization
from .common import dict_of, str_of


class ParamAuthorizingHandler(RESTHandler):
    """The handler of policies or bindings: a write that is otherwise valid is refused when
    its author may not read the params it names (the strategies' ``Validate``)."""

    def __init__(self, store, server, verbs, check: ParamAuthorization):
        super().__init__(store, server, verbs)
        self.check = check

    def _admitter(self, ctx, operation, name, dry_run):
        admit = super()._admitter(ctx, operation, name, dry_run)
        if operation not in (CREATE, UPDATE):
            return admit

        def checked(obj, old=None):
            admit(obj, old)
            user = ctx.user
            if user is None or SYSTEM_PRIVILEGED_GROUP in user.groups:
                return
            strategy = self.store.strategy
            errors = (strategy.validate(obj) if old is None
                      else strategy.validate_update(obj, old))
            if errors:
                return  # the store reports them
            problem = self.check(self.server, user, obj, old)
            if problem:
                spec = self.spec
                raise new_invalid(spec.kind, spec.group, str_of(dict_of(
                    obj.get("metadata")).get("name")), [FieldError.forbidden(
                        FieldPath("spec", self.check.field), problem)])

        return checked
