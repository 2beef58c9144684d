"""The example extension API server's group, ``wardle.example.com`` (upstream's
sample-apiserver), written as a kapiserver plugin.

Flunders (namespaced) and Fischers (cluster-scoped) in ``v1alpha1``, and the ``BanFlunder``
admission plugin: a Flunder may not be named after any Fischer's ``disallowedFlunders``.
Everything goes through the hooks a third-party plugin uses. It is not an installed entry
point: load it by name (``--plugin kapiserver_plugins.wardle``) on the server that is to
serve the group, usually an extension server behind a main server's aggregator (README,
"Running an aggregated API server").
"""

from kapiserver.plugin_manager import hookimpl
from kapiserver.server.apigroups import APIGroupInfo, APIGroupInstaller

from .admission import BanFlunder
from .resources import FISCHERS, FLUNDERS, GROUP, FischerStrategy, FlunderStrategy


class WardleV1alpha1(APIGroupInstaller):
    """Install ``wardle.example.com/v1alpha1`` flunders and fischers, stored here."""

    group = GROUP

    def install(self, server):
        return APIGroupInfo(GROUP, {"v1alpha1": {
            "flunders": server.rest_handler(FLUNDERS, FlunderStrategy(FLUNDERS)),
            "fischers": server.rest_handler(FISCHERS, FischerStrategy(FISCHERS)),
        }})


@hookimpl
def kapiserver_api_groups(config):
    return [WardleV1alpha1()]


@hookimpl
def kapiserver_admission_plugins(config):
    return {"BanFlunder": BanFlunder}
