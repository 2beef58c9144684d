"""batch/v1 Jobs and CronJobs end to end, with the real kubectl and the official Python
client: generated selectors and labels, defaults, validation as kube-apiserver 1.32
words it, status subresources, Tables and field selectors."""

import json

import pytest

from kapiserver.testing import assert_status

ADMIN = dict(user="admin", groups=["system:masters"])
NS = "batch-e2e"
JOBS = f"/apis/batch/v1/namespaces/{NS}/jobs"
CRONJOBS = f"/apis/batch/v1/namespaces/{NS}/cronjobs"


@pytest.fixture(scope="module")
def api(tmp_path_factory):
    from kapiserver.testing import KapiserverProcess

    server = KapiserverProcess(str(tmp_path_factory.mktemp("batch")), workers=2).start()
    server.request("POST", "/api/v1/namespaces", json={
        "apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}}, **ADMIN)
    yield server
    server.stop()


def job(name, restart="Never", **spec):
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": name},
            "spec": {"template": {"spec": {"containers": [{"name": "app", "image": "busybox"}],
                                           "restartPolicy": restart}}, **spec}}


def header(output: str) -> list[str]:
    return output.splitlines()[0].split()


def test_kubectl_creates_a_job_with_a_generated_selector(api):
    out = api.kubectl("create", "job", "hello", "-n", NS, "--image=busybox", "--", "echo",
                      "hi", check=True)
    assert out.stdout.strip() == "job.batch/hello created"
    obj = json.loads(api.kubectl("get", "job", "hello", "-n", NS, "-o", "json",
                                 check=True).stdout)
    uid = obj["metadata"]["uid"]
    labels = {"batch.kubernetes.io/controller-uid": uid, "batch.kubernetes.io/job-name": "hello",
              "controller-uid": uid, "job-name": "hello"}
    assert obj["metadata"]["labels"] == labels
    assert obj["spec"]["template"]["metadata"]["labels"] == labels
    assert obj["spec"]["selector"] == {"matchLabels": {"batch.kubernetes.io/controller-uid": uid}}
    assert {k: obj["spec"][k] for k in ("parallelism", "completions", "backoffLimit",
                                        "completionMode", "suspend", "manualSelector",
                                        "podReplacementPolicy")} == {
        "parallelism": 1, "completions": 1, "backoffLimit": 6, "completionMode": "NonIndexed",
        "suspend": False, "manualSelector": False, "podReplacementPolicy": "TerminatingOrFailed"}
    assert obj["metadata"]["generation"] == 1 and obj["status"] == {}
    table = api.kubectl("get", "jobs", "-n", NS, check=True).stdout
    assert header(table) == ["NAME", "STATUS", "COMPLETIONS", "DURATION", "AGE"]
    assert table.splitlines()[1].split()[:3] == ["hello", "Running", "0/1"]
    wide = api.kubectl("get", "jobs", "hello", "-n", NS, "-o", "wide", check=True).stdout
    assert header(wide)[-3:] == ["CONTAINERS", "IMAGES", "SELECTOR"]
    assert wide.splitlines()[1].split()[-1] == f"batch.kubernetes.io/controller-uid={uid}"
    # The labels select the job, as controllers and kubectl rely on.
    selected = api.kubectl("get", "jobs", "-n", NS, "-l", "job-name=hello", "-o", "name",
                           check=True).stdout
    assert selected.strip() == "job.batch/hello"


def test_a_job_without_a_valid_restart_policy(api):
    body = job("no-restart", restart=None)
    del body["spec"]["template"]["spec"]["restartPolicy"]
    response = api.request("POST", JOBS, json=body, **ADMIN)
    assert_status(response, 422, "Invalid", 'Job.batch "no-restart" is invalid: '
                  'spec.template.spec.restartPolicy: Required value: valid values: "OnFailure", '
                  '"Never"', {"name": "no-restart", "group": "batch", "kind": "Job", "causes": [
                      {"reason": "FieldValueRequired",
                       "message": 'Required value: valid values: "OnFailure", "Never"',
                       "field": "spec.template.spec.restartPolicy"}]})
    out = api.kubectl("create", "-f", "-", input=json.dumps(job("always", restart="Always")))
    assert out.returncode == 1
    assert out.stderr.strip() == (
        'The Job "always" is invalid: spec.template.spec.restartPolicy: Required value: valid '
        'values: "OnFailure", "Never"')


def test_job_updates_keep_what_is_immutable(api):
    created = api.request("POST", JOBS, json=job("immutable", suspend=True), **ADMIN).json()
    changed = json.loads(json.dumps(created))
    changed["spec"]["completions"] = 4
    changed["spec"]["template"]["spec"]["containers"][0]["image"] = "alpine"
    response = api.request("PUT", f"{JOBS}/immutable", json=changed, **ADMIN)
    body = assert_status(response, 422, "Invalid")
    assert [c["field"] for c in body["details"]["causes"]] == ["spec.completions",
                                                               "spec.template"]
    assert body["details"]["causes"][0]["message"] == "Invalid value: 4: field is immutable"
    # A suspended job that never ran may move its pods, and anything may unsuspend it.
    moved = json.loads(json.dumps(created))
    moved["spec"]["template"]["spec"]["nodeSelector"] = {"zone": "b"}
    moved["spec"]["suspend"] = False
    updated = api.request("PUT", f"{JOBS}/immutable", json=moved, **ADMIN)
    assert updated.status_code == 200, updated.text
    assert updated.json()["metadata"]["generation"] == 2


def test_generated_names_reach_the_job_name_labels(api):
    body = job("")
    body["metadata"] = {"generateName": "gen-"}
    response = api.request("POST", JOBS, json=body, **ADMIN)
    assert response.status_code == 201, response.text
    made = response.json()
    name = made["metadata"]["name"]
    assert name.startswith("gen-") and len(name) == 9
    assert made["spec"]["template"]["metadata"]["labels"]["job-name"] == name


def test_jobs_with_the_python_client(api):
    from kubernetes import client

    with api.python_client() as api_client:
        batch = client.BatchV1Api(api_client)
        made = batch.create_namespaced_job(NS, client.V1Job(
            metadata=client.V1ObjectMeta(name="py-job"),
            spec=client.V1JobSpec(completions=3, parallelism=2, template=client.V1PodTemplateSpec(
                spec=client.V1PodSpec(restart_policy="OnFailure", containers=[
                    client.V1Container(name="work", image="busybox")])))))
        assert made.spec.selector.match_labels == {
            "batch.kubernetes.io/controller-uid": made.metadata.uid}
        assert made.spec.backoff_limit == 6
        # The status is the controller's to write, through /status only.
        made.status = client.V1JobStatus(active=2, ready=1, start_time=made.metadata
                                          .creation_timestamp)
        status = batch.replace_namespaced_job_status("py-job", NS, made)
        assert (status.status.active, status.status.ready) == (2, 1)
        batch.patch_namespaced_job_status("py-job", NS, {"status": {"succeeded": 1}})
        assert batch.read_namespaced_job("py-job", NS).status.succeeded == 1
        listed = batch.list_namespaced_job(NS, field_selector="status.successful=1")
        assert [j.metadata.name for j in listed.items] == ["py-job"]
        patched = batch.patch_namespaced_job("py-job", NS, {"spec": {"parallelism": 1}})
        assert patched.spec.parallelism == 1 and patched.status.succeeded == 1
        with pytest.raises(client.ApiException) as refused:
            batch.patch_namespaced_job_status("py-job", NS, {"status": {"succeeded": 0}})
        assert refused.value.status == 422
        assert json.loads(refused.value.body)["message"] == (
            'Job.batch "py-job" is invalid: status.succeeded: Invalid value: 0: cannot '
            "decrease the succeeded counter")
        batch.delete_namespaced_job("py-job", NS)
    table = api.get(JOBS, headers={"Accept": "application/json;as=Table;v=v1;g=meta.k8s.io"},
                    **ADMIN).json()
    assert [c["name"] for c in table["columnDefinitions"]] == [
        "Name", "Status", "Completions", "Duration", "Age", "Containers", "Images", "Selector"]


def test_kubectl_creates_cronjobs_and_jobs_from_them(api):
    out = api.kubectl("create", "cronjob", "nightly", "-n", NS, "--image=busybox",
                      "--schedule=0 3 * * *", "--", "date", check=True)
    assert out.stdout.strip() == "cronjob.batch/nightly created"
    obj = json.loads(api.kubectl("get", "cronjob", "nightly", "-n", NS, "-o", "json",
                                 check=True).stdout)
    assert {k: obj["spec"][k] for k in ("concurrencyPolicy", "suspend",
                                        "successfulJobsHistoryLimit",
                                        "failedJobsHistoryLimit")} == {
        "concurrencyPolicy": "Allow", "suspend": False, "successfulJobsHistoryLimit": 3,
        "failedJobsHistoryLimit": 1}
    table = api.kubectl("get", "cronjobs", "-n", NS, check=True).stdout
    assert header(table) == ["NAME", "SCHEDULE", "TIMEZONE", "SUSPEND", "ACTIVE", "LAST",
                             "SCHEDULE", "AGE"]
    assert table.splitlines()[1].split()[:8] == ["nightly", "0", "3", "*", "*", "*", "<none>",
                                                 "False"]
    out = api.kubectl("create", "job", "manual-run", "-n", NS, "--from=cronjob/nightly",
                      check=True)
    assert out.stdout.strip() == "job.batch/manual-run created"
    run = json.loads(api.kubectl("get", "job", "manual-run", "-n", NS, "-o", "json",
                                 check=True).stdout)
    assert run["metadata"]["annotations"] == {"cronjob.kubernetes.io/instantiate": "manual"}
    assert run["metadata"]["ownerReferences"][0]["name"] == "nightly"
    assert run["spec"]["template"]["spec"]["containers"][0]["command"] == ["date"]


def test_cronjob_schedules_and_time_zones(api):
    out = api.kubectl("create", "cronjob", "bad", "-n", NS, "--image=busybox",
                      "--schedule=61 * * * *")
    assert out.returncode == 1
    assert out.stderr.strip() == (
        'error: failed to create cronjob: CronJob.batch "bad" is invalid: spec.schedule: '
        'Invalid value: "61 * * * *": end of range (61) above maximum (59): 61')
    body = {"apiVersion": "batch/v1", "kind": "CronJob", "metadata": {"name": "tz"},
            "spec": {"schedule": "CRON_TZ=UTC 0 * * * *", "timeZone": "Mars/Base",
                     "jobTemplate": {"spec": {"template": {"spec": {
                         "containers": [{"name": "a", "image": "busybox"}],
                         "restartPolicy": "Never"}}}}}}
    response = api.request("POST", CRONJOBS, json=body, **ADMIN)
    assert_status(response, 422, "Invalid", (
        'CronJob.batch "tz" is invalid: [spec.schedule: Invalid value: "CRON_TZ=UTC 0 * * * *": '
        "cannot use TZ or CRON_TZ in schedule, use timeZone field instead, spec.timeZone: "
        'Invalid value: "Mars/Base": unknown time zone Mars/Base]'))
    body["spec"].update(schedule="@hourly", timeZone="Europe/Berlin")
    assert api.request("POST", CRONJOBS, json=body, **ADMIN).status_code == 201
    row = api.kubectl("get", "cronjob", "tz", "-n", NS, "--no-headers", check=True).stdout
    assert row.split()[:4] == ["tz", "@hourly", "Europe/Berlin", "False"]


def test_cronjobs_with_the_python_client(api):
    from kubernetes import client

    with api.python_client() as api_client:
        batch = client.BatchV1Api(api_client)
        made = batch.create_namespaced_cron_job(NS, client.V1CronJob(
            metadata=client.V1ObjectMeta(name="py-cron"),
            spec=client.V1CronJobSpec(schedule="*/10 * * * *", job_template=client.V1JobTemplateSpec(
                spec=client.V1JobSpec(template=client.V1PodTemplateSpec(spec=client.V1PodSpec(
                    restart_policy="Never",
                    containers=[client.V1Container(name="a", image="busybox")])))))))
        assert made.spec.concurrency_policy == "Allow" and made.metadata.generation == 1
        status = batch.patch_namespaced_cron_job_status("py-cron", NS, {"status": {
            "active": [{"kind": "Job", "name": "py-cron-1", "namespace": NS}]}})
        assert status.status.active[0].name == "py-cron-1"
        suspended = batch.patch_namespaced_cron_job("py-cron", NS, {"spec": {"suspend": True}})
        assert suspended.spec.suspend is True and suspended.metadata.generation == 2
        assert len(suspended.status.active) == 1
        names = [c.metadata.name for c in batch.list_namespaced_cron_job(NS).items]
        assert "py-cron" in names
        batch.delete_namespaced_cron_job("py-cron", NS)
