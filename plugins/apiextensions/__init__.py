"""The ``apiextensions`` delegate, last before 404 (upstream's apiextensions-apiserver).

CustomResourceDefinitions and custom resources arrive with the apiextensions issue; until
then it serves no path of its own and hands every request on to not-found.
"""

from kapiserver.plugin_manager import hookimpl
from kapiserver.server.delegation import InstalledGroupsDelegate


class APIExtensionsDelegate(InstalledGroupsDelegate):
    """Serve the groups installed for apiextensions; hand everything else on."""

    name = "apiextensions"


@hookimpl
def kapiserver_delegates(config):
    return {"apiextensions": APIExtensionsDelegate}
