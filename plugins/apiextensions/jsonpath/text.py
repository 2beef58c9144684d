"""Values printed as upstream prints them: Go's ``fmt`` (``%v``) and the
JSON ``PrintResults`` writes for maps and lists."""

from __future__ import annotations

from kapiserver.apimachinery.field_errors import go_float


def to_text(value) -> str:
    """``value`` as upstream's ``PrintResults`` writes one result: maps and lists as
    compact JSON (Go's ``json.Marshal``), other values with Go's ``fmt`` (``true``,
    ``1.5``, ``1e+06``), a null as ``<no value>`` (what ``reflect.ValueOf(nil)`` prints)."""
    if value is None:
        return "<no value>"
    if isinstance(value, (dict, list)):
        from kapiserver.fieldmanager.gojson import go_json

        return go_json(value)
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, float):
        return go_float(value)
    return str(value)
