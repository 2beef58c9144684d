"""The ``batch`` API group: Jobs, which run pods to completion, and CronJobs, which create
Jobs on a schedule."""

from kapiserver.plugin_manager import hookimpl
from kapiserver.server.apigroups import APIGroupInfo, APIGroupInstaller, builtin_handlers

from .cronjobs import CRONJOBS, CronJobStrategy
from .jobs import JOBS, JobRegistry, JobStrategy


class BatchV1(APIGroupInstaller):
    """Install ``batch/v1`` jobs and cronjobs (and their ``status``)."""

    group = "batch"
    delegate = "kube"

    def install(self, server):
        handlers = builtin_handlers(server, JobStrategy(JOBS), JobRegistry)
        handlers.update(builtin_handlers(server, CronJobStrategy(CRONJOBS)))
        return APIGroupInfo(self.group, {"v1": handlers})


@hookimpl
def kapiserver_api_groups(config):
    return [BatchV1()]
