"""The ``kube`` delegate: serves the API groups installed for it (upstream's kube server).

Built-in groups arrive through ``kapiserver_api_groups`` with ``delegate = "kube"`` —
which is also where third-party groups land unless they name another delegate.
"""

from kapiserver.plugin_manager import hookimpl
from kapiserver.server.delegation import InstalledGroupsDelegate


class KubeDelegate(InstalledGroupsDelegate):
    """Route resource requests to the handlers of the groups installed here."""

    name = "kube"


@hookimpl
def kapiserver_delegates(config):
    return {"kube": KubeDelegate}
