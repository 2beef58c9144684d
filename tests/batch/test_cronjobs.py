"""CronJobs: SetDefaults_CronJob, ValidateCronJobCreate/Update (schedules, time zones, the
job template) and the table (kapiserver_plugins.batch.cronjobs)."""

import copy
import json
import pathlib

import pytest

from kapiserver_plugins.batch.cronjobs import (CRONJOBS, CronJobStrategy, validate_schedule,
                                               validate_time_zone)
from kapiserver.apimachinery.field_errors import FieldPath

from .support import created, texts, updated

KINDS = pathlib.Path("/work/shared/reference/wide/kinds")
PATH = FieldPath("spec", "schedule")


@pytest.fixture
def strategy():
    return CronJobStrategy(CRONJOBS)


def cronjob(name="cj1", schedule="*/5 * * * *", restart="OnFailure", job_spec=None, **spec):
    template = {"spec": {"containers": [{"name": "app", "image": "nginx:1.27"}],
                         "restartPolicy": restart}}
    body = {"apiVersion": "batch/v1", "kind": "CronJob", "metadata": {"name": name},
            "spec": {"schedule": schedule,
                     "jobTemplate": {"spec": {"template": template, **(job_spec or {})}}}}
    body["spec"].update(spec)
    return body


def transcript(name):
    path = KINDS / name
    if not path.exists():
        pytest.skip("reference transcripts not available")
    return json.loads(path.read_text())


def test_create_fills_what_upstream_fills(strategy):
    exchange = transcript("cronjobs-create.json")
    obj = created(strategy, exchange["request"]["body"])
    assert obj["spec"] == exchange["response"]["body"]["spec"]
    assert obj["status"] == {}
    assert "labels" not in obj["metadata"]


def test_the_transcripts_invalid_cronjob(strategy):
    exchange = transcript("cronjobs-invalid.json")
    obj = created(strategy, exchange["request"]["body"])
    body = exchange["response"]["body"]
    assert [e.to_cause() for e in strategy.validate(obj)] == body["details"]["causes"]


@pytest.mark.parametrize("schedule, allow_tz, time_zone, messages", [
    ("@hourly", False, None, []),
    ("TZ=UTC * * * * *", False, None, [
        'spec.schedule: Invalid value: "TZ=UTC * * * * *": cannot use TZ or CRON_TZ in '
        'schedule, use timeZone field instead']),
    ("CRON_TZ=UTC 0 * * * *", True, None, []),
    ("CRON_TZ=UTC 0 * * * *", True, "UTC", [
        'spec.schedule: Invalid value: "CRON_TZ=UTC 0 * * * *": cannot use both timeZone field '
        'and TZ or CRON_TZ in schedule']),
    ("TZ=Atlantis/Lost 0 * * * *", False, None, [
        'spec.schedule: Invalid value: "TZ=Atlantis/Lost 0 * * * *": provided bad location '
        'Atlantis/Lost: unknown time zone Atlantis/Lost',
        'spec.schedule: Invalid value: "TZ=Atlantis/Lost 0 * * * *": cannot use TZ or CRON_TZ '
        'in schedule, use timeZone field instead']),
])
def test_schedule_format(schedule, allow_tz, time_zone, messages):
    assert texts(validate_schedule(schedule, allow_tz, time_zone, PATH)) == messages


@pytest.mark.parametrize("time_zone, messages", [
    (None, []), ("Europe/Berlin", []), ("Etc/GMT-14", []), ("UTC", []),
    ("", ['spec.timeZone: Invalid value: "": timeZone must be nil or non-empty string']),
    ("Local", ['spec.timeZone: Invalid value: "Local": timeZone must be an explicit time zone '
               'as defined in https://www.iana.org/time-zones']),
    ("local", ['spec.timeZone: Invalid value: "local": timeZone must be an explicit time zone '
               'as defined in https://www.iana.org/time-zones',
               'spec.timeZone: Invalid value: "local": unknown time zone local']),
    ("Mars/Olympus_Mons", ['spec.timeZone: Invalid value: "Mars/Olympus_Mons": unknown time '
                           'zone Mars/Olympus_Mons']),
    ("America/../etc", ['spec.timeZone: Invalid value: "America/../etc": unknown time zone '
                        'America/../etc']),
    ("Europe/Berlin\n", ['spec.timeZone: Invalid value: "Europe/Berlin\\n": unknown time zone '
                         'Europe/Berlin\n']),
    ("America/Buenos Aires", ['spec.timeZone: Invalid value: "America/Buenos Aires": unknown '
                              'time zone America/Buenos Aires']),
])
def test_time_zone(time_zone, messages):
    assert texts(validate_time_zone(time_zone, FieldPath("spec", "timeZone"))) == messages


def test_spec_errors(strategy):
    body = cronjob(name="c" * 53, schedule="", concurrencyPolicy="Sometimes",
                   startingDeadlineSeconds=-1, successfulJobsHistoryLimit=-2,
                   job_spec={"selector": {"matchLabels": {"a": "b"}}, "manualSelector": True,
                             "backoffLimit": -1})
    errors = texts(strategy.validate(created(strategy, body)))
    assert errors[:3] == [
        "spec.schedule: Required value",
        "spec.startingDeadlineSeconds: Invalid value: -1: must be greater than or equal to 0",
        'spec.concurrencyPolicy: Unsupported value: "Sometimes": supported values: "Allow", '
        '"Forbid", "Replace"']
    assert "spec.jobTemplate.spec.backoffLimit: Invalid value: -1: must be greater than or " \
           "equal to 0" in errors
    assert errors[-4:] == [
        'spec.jobTemplate.spec.selector: Invalid value: v1.LabelSelector{MatchLabels:'
        'map[string]string{"a":"b"}, MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: '
        '`selector` will be auto-generated',
        'spec.jobTemplate.spec.manualSelector: Unsupported value: true: supported values: '
        '"nil", "false"',
        "spec.successfulJobsHistoryLimit: Invalid value: -2: must be greater than or equal to 0",
        f'metadata.name: Invalid value: "{"c" * 53}": must be no more than 52 characters']


def test_a_job_template_must_not_restart_always(strategy):
    errors = texts(strategy.validate(created(strategy, cronjob(restart="Always"))))
    assert errors == ['spec.jobTemplate.spec.template.spec.restartPolicy: Required value: '
                      'valid values: "OnFailure", "Never"']


def test_updates(strategy):
    old = created(strategy, cronjob(name="c" * 60, schedule="TZ=UTC 0 * * * *"))
    new = copy.deepcopy(old)
    new["spec"]["schedule"] = "CRON_TZ=UTC 5 * * * *"
    new["spec"]["suspend"] = True
    new = updated(strategy, new, old)
    # An old schedule with TZ may keep one; the long name stays.
    assert texts(strategy.validate_update(new, old)) == []
    assert strategy.spec_changed(new, old)
    new["spec"]["timeZone"] = "Europe/Paris"
    assert texts(strategy.validate_update(new, old)) == [
        'spec.schedule: Invalid value: "CRON_TZ=UTC 5 * * * *": cannot use both timeZone field '
        'and TZ or CRON_TZ in schedule']


def test_status_writes_keep_the_spec_and_check_nothing_else(strategy):
    old = created(strategy, cronjob())
    old["metadata"]["resourceVersion"] = "2"
    new = copy.deepcopy(old)
    new["spec"]["schedule"] = "bad"
    new["status"] = {"active": [{"kind": "Job", "name": "cj1-1"}],
                     "lastScheduleTime": "2026-01-01T00:00:00Z"}
    strategy.prepare_status_update(new, old)
    assert new["spec"] == old["spec"]
    assert texts(strategy.validate_status_update(new, old)) == []


def test_table_and_warnings(strategy):
    obj = created(strategy, cronjob(schedule="TZ=UTC @daily", timeZone="UTC", suspend=True))
    obj["status"] = {"active": [{"name": "a"}, {"name": "b"}]}
    cells = strategy.table_cells(obj)
    assert cells[:6] + cells[7:] == ["cj1", "TZ=UTC @daily", "UTC", "True", 2, "<none>",
                                     "app", "nginx:1.27", "<none>"]
    obj["status"]["lastScheduleTime"] = obj["metadata"]["creationTimestamp"]
    assert strategy.table_cells(obj)[5] == strategy.table_cells(obj)[6] != "<none>"
    assert strategy.warnings_on_create(obj) == [
        "cannot use TZ or CRON_TZ in schedule, use timeZone field instead"]
