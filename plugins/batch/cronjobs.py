"""CronJobs (with ``status``): ``pkg/registry/batch/cronjob``, ``SetDefaults_CronJob`` and
``ValidateCronJobCreate``/``ValidateCronJobUpdate`` of kube-apiserver 1.32.

The schedule is parsed as the cronjob controller parses it (``cron.parse_standard``);
a ``TZ=`` or ``CRON_TZ=`` in it is refused (``spec.timeZone`` says that now), except on
an object that already had one. ``spec.timeZone`` must name a zone of the tz database.
The job template gets the pod template's defaults only (a Job's defaults are the Job's,
once the controller creates it) and may not carry a selector: it is generated per Job.
"""

from __future__ import annotations

import re

from kapiserver.apimachinery.field_errors import FieldError, FieldPath
from kapiserver.apimachinery.selector_validation import go_label_selector
from kapiserver.apimachinery.validation import (validate_core_object_meta,
                                                validate_core_object_meta_update,
                                                validate_nonnegative_field)
from kapiserver.registry.builtin import builtin_spec
from kapiserver.registry.printers import age
from kapiserver_plugins.apps.base import AppsStrategy

from . import cron, podtemplates
from .job_validation import as_dict, as_list, as_str, validate_job_spec_fields
from .jobs import (container_cells, format_label_selector, job_spec_warnings, name_warnings,
                   set_job_template_defaults)

CRONJOBS = builtin_spec("batch", "v1", "cronjobs")
SPEC = FieldPath("spec")
CONCURRENCY_POLICIES = ("Allow", "Forbid", "Replace")
#: ``DNS1035LabelMaxLength - 11``: a Job's name is the CronJob's and an 11-character suffix.
MAX_NAME_LENGTH = 52
TZ_IN_SCHEDULE = "cannot use TZ or CRON_TZ in schedule, use timeZone field instead"
#: https://data.iana.org/time-zones/theory.html#naming, with 0-9 and + tolerated for
#: legacy names (``validTimeZoneCharacters``).
_TIME_ZONE_PART = re.compile(r"[A-Za-z.\-_0-9+]{1,14}")


def _spec(obj: dict) -> dict:
    spec = obj.get("spec")
    if not isinstance(spec, dict):
        spec = obj["spec"] = {}
    return spec


def set_cronjob_defaults(obj: dict) -> None:
    """``SetObjectDefaults_CronJob``: the CronJob's own defaults and the job template's
    nested ones."""
    spec = _spec(obj)
    if not spec.get("concurrencyPolicy"):
        spec["concurrencyPolicy"] = "Allow"
    if spec.get("suspend") is None:
        spec["suspend"] = False
    if spec.get("successfulJobsHistoryLimit") is None:
        spec["successfulJobsHistoryLimit"] = 3
    if spec.get("failedJobsHistoryLimit") is None:
        spec["failedJobsHistoryLimit"] = 1
    template = spec.get("jobTemplate")
    if not isinstance(template, dict):
        template = spec["jobTemplate"] = {}
    job_spec = template.get("spec")
    if not isinstance(job_spec, dict):
        job_spec = template["spec"] = {}
    set_job_template_defaults(job_spec)


# -- validation ---------------------------------------------------------------------------------

def validate_schedule(schedule: str, allow_tz: bool, time_zone,
                      path: FieldPath) -> list[FieldError]:
    """``validateScheduleFormat``."""
    errs = []
    try:
        cron.parse_standard(schedule)
    except cron.ScheduleError as err:
        errs.append(FieldError.invalid(path, schedule, str(err)))
    if allow_tz and "TZ" in schedule and time_zone is not None:
        errs.append(FieldError.invalid(path, schedule, "cannot use both timeZone field and TZ "
                                                       "or CRON_TZ in schedule"))
    elif not allow_tz and "TZ" in schedule:
        errs.append(FieldError.invalid(path, schedule, TZ_IN_SCHEDULE))
    return errs


def validate_time_zone(time_zone, path: FieldPath) -> list[FieldError]:
    """``validateTimeZone``: nil, or a tz database name that is not ``Local``."""
    if time_zone is None:
        return []
    time_zone = as_str(time_zone)
    if not time_zone:
        return [FieldError.invalid(path, time_zone, "timeZone must be nil or non-empty string")]
    for part in time_zone.split("/"):
        if part in (".", "..") or part.startswith("-") or not _TIME_ZONE_PART.fullmatch(part):
            return [FieldError.invalid(path, time_zone, f"unknown time zone {time_zone}")]
    errs = []
    if time_zone.lower() == "local":
        errs.append(FieldError.invalid(path, time_zone, "timeZone must be an explicit time zone "
                                                        "as defined in "
                                                        "https://www.iana.org/time-zones"))
    try:
        cron.load_location(time_zone)
    except cron.LocationError as err:
        errs.append(FieldError.invalid(path, time_zone, str(err)))
    return errs


def validate_job_template(template: dict, path: FieldPath, pod_opts) -> list[FieldError]:
    """``ValidateJobTemplateSpec``: the job spec's rules; no selector of its own."""
    spec = as_dict(template.get("spec"))
    errs = validate_job_spec_fields(spec, path.child("spec"), pod_opts)
    if spec.get("selector") is not None:
        errs.append(FieldError.invalid(path.child("spec", "selector"),
                                       go_label_selector(spec.get("selector")),
                                       "`selector` will be auto-generated"))
    if spec.get("manualSelector") is True:
        errs.append(FieldError.not_supported(path.child("spec", "manualSelector"), True,
                                             ("nil", "false")))
    return errs


def validate_cronjob_spec(spec: dict, old_spec: dict | None, pod_opts,
                          path: FieldPath = SPEC) -> list[FieldError]:
    """``validateCronJobSpec``."""
    errs = []
    schedule = as_str(spec.get("schedule"))
    if not schedule:
        errs.append(FieldError.required(path.child("schedule"), ""))
    else:
        allow_tz = old_spec is not None and "TZ" in as_str(old_spec.get("schedule"))
        errs += validate_schedule(schedule, allow_tz, spec.get("timeZone"),
                                  path.child("schedule"))
    deadline = spec.get("startingDeadlineSeconds")
    if isinstance(deadline, int) and not isinstance(deadline, bool):
        errs += validate_nonnegative_field(deadline, path.child("startingDeadlineSeconds"))
    if old_spec is None or old_spec.get("timeZone") != spec.get("timeZone"):
        errs += validate_time_zone(spec.get("timeZone"), path.child("timeZone"))
    policy = as_str(spec.get("concurrencyPolicy"))
    if not policy:
        errs.append(FieldError.required(path.child("concurrencyPolicy"), ""))
    elif policy not in CONCURRENCY_POLICIES:
        errs.append(FieldError.not_supported(path.child("concurrencyPolicy"), policy,
                                             CONCURRENCY_POLICIES))
    errs += validate_job_template(as_dict(spec.get("jobTemplate")), path.child("jobTemplate"),
                                  pod_opts)
    for name in ("successfulJobsHistoryLimit", "failedJobsHistoryLimit"):
        value = spec.get(name)
        if isinstance(value, int) and not isinstance(value, bool):
            errs += validate_nonnegative_field(value, path.child(name))
    return errs


def _pod_template(obj: dict) -> dict:
    return as_dict(as_dict(as_dict(_spec(obj).get("jobTemplate")).get("spec")).get("template"))


# -- the table --------------------------------------------------------------------------------

def cronjob_table_cells(obj: dict) -> list:
    """``printCronJob`` with its wide columns."""
    meta, spec, status = (as_dict(obj.get("metadata")), as_dict(obj.get("spec")),
                          as_dict(obj.get("status")))
    last = status.get("lastScheduleTime")
    suspend = spec.get("suspend")
    job_spec = as_dict(as_dict(spec.get("jobTemplate")).get("spec"))
    names, images = container_cells(job_spec.get("template"))
    return [meta.get("name", ""), as_str(spec.get("schedule")),
            spec["timeZone"] if isinstance(spec.get("timeZone"), str) else "<none>",
            "<unset>" if not isinstance(suspend, bool) else ("True" if suspend else "False"),
            len(as_list(status.get("active"))), age(last) if last else "<none>",
            age(meta.get("creationTimestamp")), names, images,
            format_label_selector(job_spec.get("selector"))]


class CronJobStrategy(AppsStrategy):
    """``cronJobStrategy`` and ``cronJobStatusStrategy`` (a workload's strategy: field
    ownership of its job template's pod template as upstream's)."""

    has_generation = True
    template_path = "spec.jobTemplate.spec.template"

    def set_defaults(self, obj):
        set_cronjob_defaults(obj)

    def spec_changed(self, new, old):
        return new.get("spec") != old.get("spec")

    def validate_meta(self, meta):
        return validate_core_object_meta(meta, True, self.name_validator())

    def validate(self, obj):
        meta = obj.get("metadata") or {}
        errs = self.validate_meta(meta) + validate_cronjob_spec(
            _spec(obj), None, podtemplates.validation_options(_pod_template(obj)))
        name = as_str(meta.get("name"))
        if len(name) > MAX_NAME_LENGTH:
            errs.append(FieldError.invalid(FieldPath("metadata", "name"), name,
                                           f"must be no more than {MAX_NAME_LENGTH} characters"))
        return errs

    def validate_update(self, new, old):
        # The name's length is not checked again: older CronJobs may keep longer names.
        return (validate_core_object_meta_update(new.get("metadata") or {},
                                                 old.get("metadata") or {})
                + validate_cronjob_spec(_spec(new), _spec(old), podtemplates.validation_options(
                    _pod_template(new), _pod_template(old))))

    def warnings_on_create(self, obj):
        warnings = name_warnings(as_str(as_dict(obj.get("metadata")).get("name")))
        warnings += job_spec_warnings(FieldPath("spec", "jobTemplate", "spec"),
                                      as_dict(as_dict(_spec(obj).get("jobTemplate")).get("spec")))
        if "TZ" in as_str(_spec(obj).get("schedule")):
            warnings.append(TZ_IN_SCHEDULE)
        return warnings

    def validate_status(self, new, old):
        # cronJobStatusStrategy.ValidateUpdate checks nothing beyond the object meta.
        return []

    def table_cells(self, obj):
        return cronjob_table_cells(obj)
