"""The REST handler of FlowSchemas (imported when the group installs: the web layer stays
out of the gunicorn master)."""

from kapiserver.endpoints.handlers import RESTHandler

from .flowschemas import matching_order


class FlowSchemaHandler(RESTHandler):
    """FlowSchemas' handler: a Table lists them in matching order (``printFlowSchemaList``
    sorts by matchingPrecedence, then name), as they are consulted."""

    def table(self, obj, include):
        if obj.get("kind") == self.spec.list_kind:
            obj = {**obj, "items": sorted(obj.get("items") or [], key=matching_order)}
        return super().table(obj, include)
