"""``BanFlunder`` admission (upstream sample-apiserver's ``banflunder`` plugin).

On create, a Flunder whose name is listed in any Fischer's ``disallowedFlunders`` is
refused with 403 Forbidden and upstream's message. Like upstream's, it is a mutating
plugin (it refuses in ``admit``), so it answers before the object is validated.
"""

from kapiserver import errors
from kapiserver.admission import CREATE, AdmissionPlugin

from .resources import FISCHERS, FLUNDERS


class BanFlunder(AdmissionPlugin):
    """Refuse Flunders named after a disallowed name (module docstring)."""

    name = "BanFlunder"
    operations = frozenset({CREATE})

    def __init__(self, server):
        self.server = server

    def admit(self, attributes):
        spec = attributes.resource
        if (spec.group, spec.kind) != (FLUNDERS.group, FLUNDERS.kind):
            return
        name = (attributes.object.get("metadata") or {}).get("name", "")
        fischers = self.server.registries[(FISCHERS.group, FISCHERS.resource)]
        for fischer in fischers.list("")["items"]:
            if name in (fischer.get("disallowedFlunders") or []):
                raise errors.Forbidden.for_resource(
                    FLUNDERS.group, FLUNDERS.resource, attributes.name or name,
                    "this name may not be used, please change the resource name")
