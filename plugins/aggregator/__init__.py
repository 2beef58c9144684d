"""The ``aggregator`` delegate, first in the chain (upstream's kube-aggregator).

APIService objects and proxying to extension servers arrive with the aggregator issue;
until then it serves no path of its own and hands every request on. Groups installed with
``delegate = "aggregator"`` (``apiregistration.k8s.io`` later) are routed here.
"""

from kapiserver.plugin_manager import hookimpl
from kapiserver.server.delegation import InstalledGroupsDelegate


class AggregatorDelegate(InstalledGroupsDelegate):
    """Serve the groups installed for the aggregator; hand everything else on."""

    name = "aggregator"


@hookimpl
def kapiserver_delegates(config):
    return {"aggregator": AggregatorDelegate}
