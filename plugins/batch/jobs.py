"""Jobs (with ``status``): ``pkg/registry/batch/job`` and ``SetDefaults_Job`` of
kube-apiserver 1.32.

On create a Job gets a selector generated from its uid (``manualSelector`` unset or
false) and the ``controller-uid``/``job-name`` labels, legacy and
``batch.kubernetes.io/``-prefixed, on its pod template. A Job without labels of its own
carries its template's labels: upstream's defaulting copies the template's label map
(the same Go map, so the generated labels land in both) and decoding the stored object
copies them again, which is what clients see on every read.
"""

from __future__ import annotations

import calendar
import random
import time

from kapiserver import errors
from kapiserver.apimachinery.field_errors import FieldPath
from kapiserver.apimachinery.labels import SelectorError, selector_from_label_selector
from kapiserver.apimachinery.validation import (is_dns1123_label, validate_core_object_meta,
                                                validate_core_object_meta_update)
from kapiserver.registry.builtin import builtin_spec
from kapiserver.registry.printers import age, human_duration
from kapiserver.registry.store import RegistryStore
from kapiserver.warning import add_warning
from kapiserver_plugins.apps.base import AppsStrategy

from . import job_validation as validation
from . import podtemplates
from .job_validation import (CONTROLLER_UID_LABEL, JOB_NAME_LABEL, LEGACY_CONTROLLER_UID_LABEL,
                             LEGACY_JOB_NAME_LABEL, as_dict, as_int, as_list, as_str)

JOBS = builtin_spec("batch", "v1", "jobs", selectable_fields=("status.successful",))
#: ``math.MaxInt32``: the backoff limit of a job that limits its retries per index.
MAX_INT32 = (1 << 31) - 1
#: ``pkg/api/job`` warnings' thresholds.
PARALLELISM_SOFT_LIMIT_FOR_UNLIMITED_COMPLETIONS = 10_000


def _spec(obj: dict) -> dict:
    spec = obj.get("spec")
    if not isinstance(spec, dict):
        spec = obj["spec"] = {}
    return spec


def _template_labels(obj: dict):
    """The pod template's label map as stored in the object (None when it has none)."""
    labels = as_dict(as_dict(_spec(obj).get("template")).get("metadata")).get("labels")
    return labels if isinstance(labels, dict) else None


def copy_template_labels(obj: dict) -> bool:
    """``SetDefaults_Job``'s labels: a Job without labels gets its template's label map,
    the very same map (as the Go assignment shares it). True when it did."""
    labels = _template_labels(obj)
    meta = obj.setdefault("metadata", {})
    if labels is None or meta.get("labels"):
        return False
    meta["labels"] = labels
    return True


def set_job_spec_defaults(spec: dict) -> None:
    """The defaults a JobSpec gets from ``SetObjectDefaults_Job`` besides the labels."""
    if spec.get("completions") is None and spec.get("parallelism") is None:
        spec["completions"] = 1
        spec["parallelism"] = 1
    if spec.get("parallelism") is None:
        spec["parallelism"] = 1
    if spec.get("backoffLimit") is None:
        spec["backoffLimit"] = MAX_INT32 if spec.get("backoffLimitPerIndex") is not None else 6
    if spec.get("completionMode") is None:
        spec["completionMode"] = validation.NON_INDEXED
    if spec.get("suspend") is None:
        spec["suspend"] = False
    if spec.get("podReplacementPolicy") is None:
        spec["podReplacementPolicy"] = ("Failed" if spec.get("podFailurePolicy") is not None
                                        else "TerminatingOrFailed")
    if spec.get("manualSelector") is None:
        spec["manualSelector"] = False
    set_job_template_defaults(spec)


def set_job_template_defaults(spec: dict) -> None:
    """The defaults reaching into a JobSpec's nested types (a Job's, or a CronJob's job
    template's): the pod failure policy's condition patterns and the pod template."""
    for rule in as_list(as_dict(spec.get("podFailurePolicy")).get("rules")):
        for pattern in as_list(as_dict(rule).get("onPodConditions")):
            if isinstance(pattern, dict) and not pattern.get("status"):
                pattern["status"] = "True"
    template = spec.get("template")
    if not isinstance(template, dict):
        template = spec["template"] = {}
    podtemplates.set_template_defaults(template)


def generate_selector(obj: dict) -> None:
    """``generateSelector``: the template labels and the selector that tie the pods to
    this job (labels the user set are left for validation to judge)."""
    meta, spec = obj.setdefault("metadata", {}), _spec(obj)
    template = spec.get("template")
    if not isinstance(template, dict):
        template = spec["template"] = {}
    template_meta = template.get("metadata")
    if not isinstance(template_meta, dict):
        template_meta = template["metadata"] = {}
    labels = template_meta.get("labels")
    if not isinstance(labels, dict):
        labels = template_meta["labels"] = {}
    name, uid = as_str(meta.get("name")), as_str(meta.get("uid"))
    for key in (LEGACY_JOB_NAME_LABEL, JOB_NAME_LABEL):
        labels.setdefault(key, name)
    for key in (LEGACY_CONTROLLER_UID_LABEL, CONTROLLER_UID_LABEL):
        labels.setdefault(key, uid)
    selector = spec.get("selector")
    if not isinstance(selector, dict):
        selector = spec["selector"] = {}
    if not isinstance(selector.get("matchLabels"), dict):
        selector["matchLabels"] = {}
    selector["matchLabels"].setdefault(CONTROLLER_UID_LABEL, uid)


def job_spec_warnings(path: FieldPath, spec: dict) -> list[str]:
    """``job.WarningsForJobSpec`` (the pod template's own warnings are core's)."""
    if spec.get("completionMode") != validation.INDEXED:
        return []
    if (as_int(spec.get("completions")) > validation.COMPLETIONS_SOFT_LIMIT
            and as_int(spec.get("parallelism")) > PARALLELISM_SOFT_LIMIT_FOR_UNLIMITED_COMPLETIONS):
        return [f"{path}: In Indexed Jobs with a number of completions higher than 10^5 and a "
                "parallelism higher than 10^4, Kubernetes might not be able to track "
                "completedIndexes when a big number of indexes fail"]
    return []


def name_warnings(name: str) -> list[str]:
    """The warning for a name that is no DNS label (it becomes the pods' hostnames)."""
    msgs = is_dns1123_label(name)
    if not msgs:
        return []
    return ["metadata.name: this is used in Pod names and hostnames, which can result in "
            f"surprising behavior; a DNS label is recommended: [{' '.join(msgs)}]"]


# -- the table --------------------------------------------------------------------------------

def _seconds(timestamp) -> float | None:
    if not isinstance(timestamp, str) or not timestamp:
        return None
    try:
        return calendar.timegm(time.strptime(timestamp[:19], "%Y-%m-%dT%H:%M:%S"))
    except ValueError:
        return None


def format_label_selector(selector) -> str:
    """``metav1.FormatLabelSelector``: the selector's text, ``<none>`` when empty."""
    try:
        text = str(selector_from_label_selector(selector if isinstance(selector, dict)
                                                else None))
    except SelectorError:
        return "<error>"
    return text or "<none>"


def container_cells(template) -> tuple[str, str]:
    """``layoutContainerCells``: the template's container names and images."""
    containers = [as_dict(c) for c in as_list(as_dict(as_dict(template).get("spec"))
                                              .get("containers"))]
    return (",".join(as_str(c.get("name")) for c in containers),
            ",".join(as_str(c.get("image")) for c in containers))


def _has_condition(job: dict, kind: str) -> bool:
    """``hasJobCondition``: the condition of that type is True."""
    return validation.is_condition_true(job, kind)


def job_table_cells(job: dict, now: float | None = None) -> list:
    """``printJob`` with its wide columns."""
    meta, spec, status = as_dict(job.get("metadata")), as_dict(job.get("spec")), \
        as_dict(job.get("status"))
    succeeded = as_int(status.get("succeeded"))
    completions = spec.get("completions")
    if isinstance(completions, int):
        completion_text = f"{succeeded}/{completions}"
    else:
        parallelism = as_int(spec.get("parallelism"))
        completion_text = (f"{succeeded}/1 of {parallelism}" if parallelism > 1
                           else f"{succeeded}/1")
    started, finished = _seconds(status.get("startTime")), _seconds(status.get("completionTime"))
    if started is None:
        duration = ""
    elif finished is None:
        duration = human_duration((time.time() if now is None else now) - started)
    else:
        duration = human_duration(finished - started)
    if _has_condition(job, "Complete"):
        state = "Complete"
    elif _has_condition(job, "Failed"):
        state = "Failed"
    elif meta.get("deletionTimestamp"):
        state = "Terminating"
    elif _has_condition(job, "Suspended"):
        state = "Suspended"
    elif _has_condition(job, "FailureTarget"):
        state = "FailureTarget"
    else:
        state = "Running"
    names, images = container_cells(spec.get("template"))
    return [meta.get("name", ""), state, completion_text, duration,
            age(meta.get("creationTimestamp")), names, images,
            format_label_selector(spec.get("selector"))]


# -- the strategy ------------------------------------------------------------------------------

class JobStrategy(AppsStrategy):
    """``jobStrategy`` and ``jobStatusStrategy`` (a workload's strategy: field ownership of
    its pod template as upstream's)."""

    has_generation = True
    template_path = "spec.template"
    #: batch/v1 Jobs orphan their pods by default, for backwards compatibility (upstream's
    #: ``DefaultGarbageCollectionPolicy``; the REST's DELETE warns of it).
    default_garbage_collection_policy = "OrphanDependents"

    def apply_defaults(self, obj):
        self.normalize(obj)
        copied = copy_template_labels(obj)
        set_job_spec_defaults(_spec(obj))
        self.normalize(obj)
        if copied and _template_labels(obj) is not None:
            # Normalizing rebuilt the maps: share the template's again, as the defaulted
            # Go object does when PrepareForCreate adds the generated labels to it.
            obj["metadata"]["labels"] = _template_labels(obj)

    def on_create(self, obj):
        if _spec(obj).get("manualSelector") is not True:
            generate_selector(obj)
        # Decoding the stored object copies the template's labels to a Job without any.
        copy_template_labels(obj)

    def from_storage(self, obj):
        labels = _template_labels(obj)
        meta = obj.setdefault("metadata", {})
        if labels is not None and not meta.get("labels"):
            meta["labels"] = dict(labels)
        return obj

    def spec_changed(self, new, old):
        return new.get("spec") != old.get("spec")

    def validate_meta(self, meta):
        return validate_core_object_meta(meta, True, self.name_validator())

    def validate(self, obj):
        opts = validation.JobValidationOptions(
            pod=podtemplates.validation_options(as_dict(_spec(obj).get("template"))))
        return self.validate_meta(obj.get("metadata") or {}) + validation.validate_job(obj, opts)

    def validate_update(self, new, old):
        template, old_template = (as_dict(_spec(new).get("template")),
                                  as_dict(_spec(old).get("template")))
        opts = validation.update_options(new, old, podtemplates.validation_options(
            template, old_template))
        return (self.validate_meta(new.get("metadata") or {})
                + validation.validate_job(new, opts)
                + validate_core_object_meta_update(new.get("metadata") or {},
                                                   old.get("metadata") or {})
                + validation.validate_job_spec_update(_spec(new), _spec(old), opts))

    def warnings_on_create(self, obj):
        return (name_warnings(as_str(as_dict(obj.get("metadata")).get("name")))
                + job_spec_warnings(FieldPath("spec"), as_dict(obj.get("spec"))))

    def validate_status_update(self, new, old):
        return (validate_core_object_meta_update(new.get("metadata") or {},
                                                 old.get("metadata") or {})
                + validation.validate_job_status_update(
                    new, old, validation.status_validation_options(new, old)))

    def selectable_fields(self, obj):
        fields = super().selectable_fields(obj)
        fields["status.successful"] = str(as_int(as_dict(obj.get("status")).get("succeeded")))
        return fields

    def table_cells(self, obj):
        return job_table_cells(obj)


# Names as upstream's ``names.SimpleNameGenerator`` makes them.
_NAME_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"
_NAME_SUFFIX = 5
_MAX_GENERATED_NAME = 63
_GENERATE_NAME_RETRIES = 8


#: upstream's ``deleteOptionWarnings`` (``pkg/registry/batch/job/storage``).
DELETE_OPTION_WARNING = ("child pods are preserved by default when jobs are deleted; set "
                         "propagationPolicy=Background to remove them or set "
                         "propagationPolicy=Orphan to suppress this warning")


class JobRegistry(RegistryStore):
    """Jobs' storage: a ``generateName`` is turned into the name before the strategy
    prepares the object (upstream's store generates it before ``BeforeCreate``), so the
    ``job-name`` labels carry the generated name; a taken name is generated anew."""

    def create(self, obj, namespace="", dry_run=False, admit=None, manage=None):
        meta = obj.get("metadata") if isinstance(obj.get("metadata"), dict) else {}
        prefix = meta.get("generateName")
        if meta.get("name") or not isinstance(prefix, str) or not prefix:
            return super().create(obj, namespace, dry_run, admit, manage)
        import copy

        for attempt in range(_GENERATE_NAME_RETRIES):
            candidate = copy.deepcopy(obj)
            candidate["metadata"]["name"] = (
                prefix[:_MAX_GENERATED_NAME - _NAME_SUFFIX]
                + "".join(random.choice(_NAME_ALPHABET) for _ in range(_NAME_SUFFIX)))
            try:
                return super().create(candidate, namespace, dry_run, admit, manage)
            except errors.AlreadyExists:
                if attempt + 1 == _GENERATE_NAME_RETRIES:
                    raise
        raise AssertionError("unreachable")

    def delete(self, namespace, name, preconditions=None, dry_run=False, admit=None,
               options=None):
        """As upstream's job REST ``Delete``: a request that does not say what becomes of
        the pods is warned that they stay (the default policy orphans them)."""
        if (options is not None and options.get("propagationPolicy") is None
                and options.get("orphanDependents") is None
                and self.strategy.default_garbage_collection_policy == "OrphanDependents"):
            add_warning(DELETE_OPTION_WARNING)
        return super().delete(namespace, name, preconditions, dry_run, admit, options=options)
