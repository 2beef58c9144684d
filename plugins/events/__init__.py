"""The ``events.k8s.io`` API group: the cluster's Events as ``events.k8s.io/v1`` sees them.

Upstream serves this group from the core Event storage, so an event created through
either API is read, updated and deleted through the other; ``events.py`` converts.
"""

from kapiserver.plugin_manager import hookimpl
from kapiserver.server.apigroups import APIGroupInfo, APIGroupInstaller

from .events import EVENTS, EventStrategy


class EventsV1(APIGroupInstaller):
    """Install ``events.k8s.io/v1`` events, kept in the core events' storage keys."""

    group = "events.k8s.io"
    delegate = "kube"

    def install(self, server):
        return APIGroupInfo(self.group, {"v1": {
            # --event-ttl is the core plugin's option: both APIs write the same objects.
            "events": server.rest_handler(EVENTS, EventStrategy(
                EVENTS, ttl=getattr(server.config, "event_ttl", 0))),
        }})


@hookimpl
def kapiserver_api_groups(config):
    return [EventsV1()]
