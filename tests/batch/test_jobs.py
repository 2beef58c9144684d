"""Jobs: SetDefaults_Job, the generated selector and labels, ValidateJob and its update and
status rules, and the table (kapiserver_plugins.batch.jobs, job_validation)."""

import copy
import json
import pathlib

import pytest

from kapiserver_plugins.batch import job_validation
from kapiserver_plugins.batch.jobs import JOBS, JobStrategy, job_table_cells

from .support import created, texts, updated

KINDS = pathlib.Path("/work/shared/reference/wide/kinds")
UID = "edd099ad-9c3e-4ce9-a832-502dee1a2f83"
CONTAINERS = [{"name": "app", "image": "nginx:1.27"}]


@pytest.fixture
def strategy():
    return JobStrategy(JOBS)


def job(name="j1", restart="Never", **spec):
    body = {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": name},
            "spec": {"template": {"spec": {"containers": copy.deepcopy(CONTAINERS)}}}}
    if restart:
        body["spec"]["template"]["spec"]["restartPolicy"] = restart
    body["spec"].update(spec)
    return body


def transcript(name):
    path = KINDS / name
    if not path.exists():
        pytest.skip("reference transcripts not available")
    return json.loads(path.read_text())


# -- defaults and the generated selector ------------------------------------------------------

def test_create_fills_what_upstream_fills(strategy):
    exchange = transcript("jobs-create.json")
    answer = exchange["response"]["body"]
    obj = created(strategy, exchange["request"]["body"], uid=answer["metadata"]["uid"])
    assert obj["spec"] == answer["spec"]
    assert obj["metadata"]["labels"] == answer["metadata"]["labels"]
    assert obj["status"] == answer["status"] == {}


def test_template_labels_are_shared_with_a_job_without_labels(strategy):
    body = job(template={"metadata": {"labels": {"app": "web"}},
                         "spec": {"containers": CONTAINERS, "restartPolicy": "Never"}})
    obj = created(strategy, body, uid=UID)
    expected = {"app": "web", "controller-uid": UID, "job-name": "j1",
                "batch.kubernetes.io/controller-uid": UID, "batch.kubernetes.io/job-name": "j1"}
    assert obj["spec"]["template"]["metadata"]["labels"] == expected
    assert obj["metadata"]["labels"] == expected
    assert obj["spec"]["selector"] == {
        "matchLabels": {"batch.kubernetes.io/controller-uid": UID}}


def test_a_jobs_own_labels_stay_its_own(strategy):
    body = job(template={"metadata": {"labels": {"app": "web"}},
                         "spec": {"containers": CONTAINERS, "restartPolicy": "Never"}})
    body["metadata"]["labels"] = {"app": "web"}
    obj = created(strategy, body, uid=UID)
    assert obj["metadata"]["labels"] == {"app": "web"}
    assert obj["spec"]["template"]["metadata"]["labels"]["job-name"] == "j1"


def test_reading_a_stored_job_without_labels_gives_it_the_templates(strategy):
    stored = created(strategy, job(), uid=UID)
    del stored["metadata"]["labels"]
    assert strategy.from_storage(stored)["metadata"]["labels"]["controller-uid"] == UID


def test_user_labels_on_the_template_win_over_generated_ones(strategy):
    body = job(template={"metadata": {"labels": {"job-name": "other"}},
                         "spec": {"containers": CONTAINERS, "restartPolicy": "Never"}})
    obj = created(strategy, body, uid=UID)
    assert obj["spec"]["template"]["metadata"]["labels"]["job-name"] == "other"


def test_a_manual_selector_is_not_generated(strategy):
    body = job(manualSelector=True, selector={"matchLabels": {"app": "web"}},
               template={"metadata": {"labels": {"app": "web"}},
                         "spec": {"containers": CONTAINERS, "restartPolicy": "Never"}})
    obj = created(strategy, body, uid=UID)
    assert obj["spec"]["selector"] == {"matchLabels": {"app": "web"}}
    assert obj["spec"]["template"]["metadata"]["labels"] == {"app": "web"}


@pytest.mark.parametrize("spec, expected", [
    ({}, {"parallelism": 1, "completions": 1, "backoffLimit": 6}),
    ({"parallelism": 3}, {"parallelism": 3, "completions": None, "backoffLimit": 6}),
    ({"completions": 4}, {"parallelism": 1, "completions": 4}),
    ({"completionMode": "Indexed", "completions": 3, "backoffLimitPerIndex": 1},
     {"backoffLimit": 2147483647}),
    ({"podFailurePolicy": {"rules": [{"action": "Ignore",
                                      "onPodConditions": [{"type": "DisruptionTarget"}]}]}},
     {"podReplacementPolicy": "Failed",
      "podFailurePolicy": {"rules": [{"action": "Ignore", "onPodConditions": [
          {"type": "DisruptionTarget", "status": "True"}]}]}}),
])
def test_spec_defaults(strategy, spec, expected):
    obj = created(strategy, job(**spec))
    assert {key: obj["spec"].get(key) for key in expected} == expected


# -- validation ----------------------------------------------------------------------------------

def test_the_transcripts_invalid_job(strategy):
    exchange = transcript("jobs-invalid.json")
    obj = created(strategy, exchange["request"]["body"])
    assert [e.to_cause() for e in strategy.validate(obj)] == \
        exchange["response"]["body"]["details"]["causes"]


def test_a_created_job_is_valid(strategy):
    assert texts(strategy.validate(created(strategy, job()))) == []


@pytest.mark.parametrize("spec, restart, message", [
    ({}, "Always", 'spec.template.spec.restartPolicy: Required value: valid values: '
                   '"OnFailure", "Never"'),
    ({"podFailurePolicy": {"rules": [{"action": "FailJob",
                                      "onExitCodes": {"operator": "In", "values": [1]}}]}},
     "OnFailure", 'spec.template.spec.restartPolicy: Invalid value: "OnFailure": only "Never" '
                  'is supported when podFailurePolicy is specified'),
    ({"completionMode": "Sideways"}, "Never",
     'spec.completionMode: Unsupported value: "Sideways": supported values: "NonIndexed", '
     '"Indexed"'),
    ({"completionMode": "Indexed", "parallelism": 2}, "Never",
     "spec.completions: Required value: when completion mode is Indexed"),
    ({"backoffLimit": -1}, "Never",
     "spec.backoffLimit: Invalid value: -1: must be greater than or equal to 0"),
    ({"backoffLimitPerIndex": 1}, "Never",
     "spec.backoffLimitPerIndex: Invalid value: 1: requires indexed completion mode"),
    ({"managedBy": "controller"}, "Never",
     'spec.managedBy: Invalid value: "controller": must be a domain-prefixed path (such as '
     '"acme.io/foo")'),
    ({"successPolicy": {"rules": [{"succeededCount": 1}]}}, "Never",
     "spec.successPolicy: Invalid value: batch.SuccessPolicy{Rules:[]batch.SuccessPolicyRule{"
     "batch.SuccessPolicyRule{SucceededIndexes:(*string)(nil), SucceededCount:(*int32)"
     "(0xc000010000)}}}: requires indexed completion mode"),
    ({"podReplacementPolicy": "Whenever"}, "Never",
     'spec.podReplacementPolicy: Unsupported value: "Whenever": supported values: "Failed", '
     '"TerminatingOrFailed"'),
    ({"podFailurePolicy": {"rules": [{"action": "Retry"}]}}, "Never",
     'spec.podFailurePolicy.rules[0].action: Unsupported value: "Retry": supported values: '
     '"Count", "FailIndex", "FailJob", "Ignore"'),
    ({"podFailurePolicy": {"rules": [{"action": "Ignore"}]}}, "Never",
     "spec.podFailurePolicy.rules[0]: Invalid value: specifying one of OnExitCodes and "
     "OnPodConditions is required"),
    ({"podFailurePolicy": {"rules": [{"action": "FailJob",
                                      "onExitCodes": {"operator": "In", "values": [3, 1, 1]}}]}},
     "Never", "spec.podFailurePolicy.rules[0].onExitCodes.values: Invalid value: "
              "[]int32{3, 1, 1}: must be ordered"),
])
def test_spec_errors(strategy, spec, restart, message):
    assert message in texts(strategy.validate(created(strategy, job(restart=restart, **spec))))


def test_a_selector_that_is_not_the_generated_one(strategy):
    body = job(selector={"matchLabels": {"app": "web"}},
               template={"metadata": {"labels": {"app": "web"}},
                         "spec": {"containers": CONTAINERS, "restartPolicy": "Never"}})
    assert texts(strategy.validate(created(strategy, body))) == [
        "spec.selector: Invalid value: v1.LabelSelector{MatchLabels:map[string]string{"
        '"app":"web", "batch.kubernetes.io/controller-uid":"0b3c5a0e-5d55-4c1b-9c55-4d3e6f4c7a10"}'
        ", MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: `selector` not auto-generated"]


def test_a_template_label_that_contradicts_the_job(strategy):
    body = job(template={"metadata": {"labels": {"job-name": "other"}},
                         "spec": {"containers": CONTAINERS, "restartPolicy": "Never"}})
    errors = texts(strategy.validate(created(strategy, body, uid="u1")))
    assert errors == [
        'spec.template.metadata.labels[job-name]: Invalid value: map[string]string{'
        '"batch.kubernetes.io/controller-uid":"u1", "batch.kubernetes.io/job-name":"j1", '
        '"controller-uid":"u1", "job-name":"other"}: must be \'j1\'']


def test_a_manual_job_needs_a_selector(strategy):
    errors = texts(strategy.validate(created(strategy, job(manualSelector=True))))
    assert errors == ["spec.selector: Required value",
                      "spec.template.metadata.labels: Invalid value: map[string]string(nil): "
                      "`selector` does not match template `labels`"]


def test_an_indexed_job_needs_hostnames_that_are_dns_labels(strategy):
    body = job(name="a" * 60, completionMode="Indexed", completions=1000)
    assert ("metadata.name: Invalid value: \"" + "a" * 60 + "\": will not able to create pod "
            "with invalid DNS label: " + "a" * 60 + "-999") in \
        texts(strategy.validate(created(strategy, body)))


# -- updates -------------------------------------------------------------------------------------

def test_what_a_job_may_not_change(strategy):
    old = created(strategy, job(), uid="u1")
    new = copy.deepcopy(old)
    new["spec"]["completions"] = 3
    new["spec"]["completionMode"] = "Indexed"
    new["spec"]["template"]["spec"]["containers"][0]["image"] = "nginx:1.28"
    errors = texts(strategy.validate_update(updated(strategy, new, old), old))
    assert "spec.completions: Invalid value: 3: can only be modified in tandem with " \
           "spec.parallelism" in errors
    assert 'spec.completionMode: Invalid value: "Indexed": field is immutable' in errors
    assert "spec.template: Invalid value: core.PodTemplateSpec{...}: field is immutable" in errors


def test_a_job_scales_parallelism_and_suspends(strategy):
    old = created(strategy, job(), uid="u1")
    new = copy.deepcopy(old)
    new["spec"]["parallelism"] = 5
    new["spec"]["suspend"] = True
    new = updated(strategy, new, old)
    assert texts(strategy.validate_update(new, old)) == []
    assert strategy.spec_changed(new, old)


def test_a_suspended_job_that_never_ran_may_move_its_pods(strategy):
    old = created(strategy, job(suspend=True), uid="u1")
    new = copy.deepcopy(old)
    new["spec"]["template"]["spec"]["nodeSelector"] = {"zone": "b"}
    assert texts(strategy.validate_update(updated(strategy, new, old), old)) == []
    old["status"] = {"startTime": "2026-01-01T00:00:00Z"}
    assert "spec.template: Invalid value: core.PodTemplateSpec{...}: field is immutable" in \
        texts(strategy.validate_update(updated(strategy, new, old), old))


# -- status --------------------------------------------------------------------------------------

def _status_update(strategy, old, status):
    new = copy.deepcopy(old)
    new["metadata"]["resourceVersion"] = "3"
    new["status"] = status
    strategy.prepare_status_update(new, old)
    return texts(strategy.validate_status_update(new, old))


def test_status_rules(strategy):
    old = created(strategy, job(), uid="u1")
    old["metadata"]["resourceVersion"] = "2"
    old["status"] = {"succeeded": 2, "active": 1, "startTime": "2026-01-01T00:00:00Z"}
    assert _status_update(strategy, old, {"succeeded": 1, "startTime":
                                          "2026-01-01T00:00:00Z"}) == [
        "status.succeeded: Invalid value: 1: cannot decrease the succeeded counter"]
    complete = [{"type": "Complete", "status": "True"}]
    assert _status_update(strategy, old, {
        "succeeded": 2, "startTime": "2026-01-01T00:00:00Z", "conditions": complete}) == [
        "status.completionTime: Required value: completionTime is required for Complete jobs"]
    assert _status_update(strategy, old, {
        "succeeded": 2, "startTime": "2026-01-01T00:00:00Z", "conditions": complete,
        "completionTime": "2025-12-31T00:00:00Z"}) == [
        "status.completionTime: Invalid value: 2025-12-31 00:00:00 +0000 UTC: completionTime "
        "cannot be set before startTime"]
    assert _status_update(strategy, old, {"succeeded": 2, "active": 1, "ready": 2,
                                          "startTime": "2026-01-01T00:00:00Z"}) == []
    assert _status_update(strategy, old, {"succeeded": 2, "active": -1,
                                          "startTime": "2026-01-01T00:00:00Z"}) == [
        "status.active: Invalid value: -1: must be greater than or equal to 0"]


def test_completed_indexes_are_checked_when_they_change(strategy):
    old = created(strategy, job(completionMode="Indexed", completions=3, parallelism=3),
                  uid="u1")
    old["metadata"]["resourceVersion"] = "2"
    assert _status_update(strategy, old, {"completedIndexes": "0,2-1"}) == [
        'status.completedIndexes: Invalid value: "0,2-1": error parsing completedIndexes: '
        'non-increasing order, previous: 2, current: 1']
    assert _status_update(strategy, old, {"completedIndexes": "0-2"}) == []
    assert _status_update(strategy, old, {"completedIndexes": "3"}) == [
        'status.completedIndexes: Invalid value: "3": error parsing completedIndexes: too '
        'large index: "3"']


def test_status_writes_keep_the_spec(strategy):
    old = created(strategy, job(), uid="u1")
    new = copy.deepcopy(old)
    new["spec"]["parallelism"] = 9
    new["status"] = {"active": 1}
    strategy.prepare_status_update(new, old)
    assert new["spec"] == old["spec"] and new["status"] == {"active": 1}


def test_index_formats():
    assert job_validation.validate_indexes_format("", 3) == 0
    assert job_validation.validate_indexes_format("0,2-4,7", 8) == 5
    with pytest.raises(ValueError, match='cannot convert string to integer for index: "x"'):
        job_validation.validate_indexes_format("x", 3)


# -- reading ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("spec, status, meta, cells", [
    ({"completions": 3}, {"succeeded": 1}, {}, ["Running", "1/3"]),
    ({"parallelism": 4}, {}, {}, ["Running", "0/1 of 4"]),
    ({}, {"conditions": [{"type": "Complete", "status": "True"}], "succeeded": 1,
          "startTime": "2026-01-01T00:00:00Z", "completionTime": "2026-01-01T00:01:30Z"},
     {}, ["Complete", "1/1", "90s"]),
    ({}, {"conditions": [{"type": "Failed", "status": "True"}]}, {}, ["Failed", "0/1"]),
    ({}, {}, {"deletionTimestamp": "2026-01-01T00:00:00Z"}, ["Terminating", "0/1"]),
    ({}, {"conditions": [{"type": "Suspended", "status": "True"}]}, {}, ["Suspended", "0/1"]),
    ({}, {"conditions": [{"type": "Suspended", "status": "False"}]}, {}, ["Running", "0/1"]),
])
def test_table_cells(strategy, spec, status, meta, cells):
    obj = created(strategy, job(**spec), uid="u1")
    obj["status"] = status
    obj["metadata"].update(meta)
    row = job_table_cells(obj)
    assert row[1:1 + len(cells)] == cells
    assert row[5:] == ["app", "nginx:1.27", "batch.kubernetes.io/controller-uid=u1"]


def test_field_selector_and_warnings(strategy):
    obj = created(strategy, job(name="Job.1"), uid="u1")
    obj["status"] = {"succeeded": 2}
    assert strategy.selectable_fields(obj)["status.successful"] == "2"
    assert strategy.warnings_on_create(obj) == [
        "metadata.name: this is used in Pod names and hostnames, which can result in "
        "surprising behavior; a DNS label is recommended: [a lowercase RFC 1123 label must "
        "consist of lower case alphanumeric characters or '-', and must start and end with "
        "an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation "
        "is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')]"]
