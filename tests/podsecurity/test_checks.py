"""The Pod Security Standards' checks, levels and label parsing (upstream's messages)."""

import pytest

from kapiserver.errors import ConfigError
from kapiserver_plugins.podsecurity.checks import Evaluator
from kapiserver_plugins.podsecurity.config import parse_configuration
from kapiserver_plugins.podsecurity.policy import (LATEST_VERSION, LevelVersion, Policy,
                                                   Version, policy_to_evaluate)

EVALUATOR = Evaluator()
RESTRICTED = LevelVersion("restricted")
BASELINE = LevelVersion("baseline")


def detail(level, spec, meta=None):
    return EVALUATOR.evaluate(level, meta or {}, spec).forbidden_detail()


def container(name="c", **context):
    c = {"name": name, "image": "nginx"}
    if context:
        c["securityContext"] = context
    return c


GOOD = {"allowPrivilegeEscalation": False, "capabilities": {"drop": ["ALL"]},
        "runAsNonRoot": True, "seccompProfile": {"type": "RuntimeDefault"}}


def test_a_plain_pod_violates_restricted_with_upstreams_message():
    assert detail(RESTRICTED, {"containers": [container()]}) == (
        'allowPrivilegeEscalation != false (container "c" must set '
        'securityContext.allowPrivilegeEscalation=false), unrestricted capabilities '
        '(container "c" must set securityContext.capabilities.drop=["ALL"]), runAsNonRoot != '
        'true (pod or container "c" must set securityContext.runAsNonRoot=true), '
        'seccompProfile (pod or container "c" must set securityContext.seccompProfile.type '
        'to "RuntimeDefault" or "Localhost")')
    assert EVALUATOR.evaluate(BASELINE, {}, {"containers": [container()]}).allowed
    assert EVALUATOR.evaluate(LevelVersion("privileged"), {},
                              {"hostNetwork": True, "containers": [container()]}).allowed


def test_a_hardened_pod_passes_restricted():
    assert EVALUATOR.evaluate(RESTRICTED, {}, {"containers": [container(**GOOD)]}).allowed
    # Pod-level runAsNonRoot and seccompProfile cover every container.
    spec = {"securityContext": {"runAsNonRoot": True, "seccompProfile": {"type": "Localhost"}},
            "containers": [container(allowPrivilegeEscalation=False,
                                     capabilities={"drop": ["ALL"], "add": ["NET_BIND_SERVICE"]})]}
    assert EVALUATOR.evaluate(RESTRICTED, {}, spec).allowed


def test_baseline_checks_each_word_their_detail():
    spec = {"hostNetwork": True, "hostPID": True,
            "securityContext": {"sysctls": [{"name": "kernel.msgmax", "value": "1"},
                                            {"name": "net.ipv4.tcp_rmem", "value": "1"}],
                                "seLinuxOptions": {"user": "u"}},
            "volumes": [{"name": "h", "hostPath": {"path": "/"}}],
            "initContainers": [container("i", privileged=True, procMount="Unmasked")],
            "containers": [dict(container("a", capabilities={"add": ["SYS_ADMIN", "CHOWN"]},
                                          seLinuxOptions={"type": "spc_t"},
                                          windowsOptions={"hostProcess": True}),
                                ports=[{"containerPort": 80, "hostPort": 8080},
                                       {"containerPort": 81, "hostPort": 80}]),
                           container("b", seccompProfile={"type": "Unconfined"},
                                     appArmorProfile={"type": "Unconfined"})]}
    meta = {"annotations": {"container.apparmor.security.beta.kubernetes.io/b": "unconfined"}}
    assert detail(BASELINE, spec, meta) == (
        'forbidden AppArmor profiles (container "b" and annotation must not set AppArmor '
        'profile type to "Unconfined", "container.apparmor.security.beta.kubernetes.io/b='
        '"unconfined""), '
        'non-default capabilities (container "a" must not include "SYS_ADMIN" in '
        'securityContext.capabilities.add), '
        'host namespaces (hostNetwork=true, hostPID=true), '
        'hostPath volumes (volume "h"), '
        'hostPort (container "a" uses hostPorts 80, 8080), '
        'privileged (container "i" must not set securityContext.privileged=true), '
        'procMount (container "i" must not set securityContext.procMount to "Unmasked"), '
        'seLinuxOptions (pod and container "a" set forbidden securityContext.seLinuxOptions: '
        'type "spc_t"; user may not be set), '
        'seccompProfile (container "b" must not set securityContext.seccompProfile.type to '
        '"Unconfined"), '
        'forbidden sysctls (kernel.msgmax), '
        'hostProcess (container "a" must not set securityContext.windowsOptions.hostProcess=true)')


def test_restricted_overrides_the_baseline_checks_it_tightens():
    spec = {"volumes": [{"name": "h", "hostPath": {"path": "/"}}, {"name": "n", "nfs": {}},
                        {"name": "e", "emptyDir": {}}],
            "securityContext": {"runAsNonRoot": False, "runAsUser": 0,
                                "seccompProfile": {"type": "RuntimeDefault"}},
            "containers": [container("a", allowPrivilegeEscalation=False,
                                     capabilities={"drop": ["ALL"], "add": ["SYS_ADMIN"]},
                                     runAsUser=0)]}
    assert detail(RESTRICTED, spec) == (
        'unrestricted capabilities (container "a" must not include "SYS_ADMIN" in '
        'securityContext.capabilities.add), '
        'restricted volume types (volumes "h", "n" use restricted volume types "hostPath", '
        '"nfs"), '
        'runAsNonRoot != true (pod must not set securityContext.runAsNonRoot=false), '
        'runAsUser=0 (pod and container "a" must not set runAsUser=0)')


def test_policy_versions_choose_the_checks_of_their_time():
    spec = {"securityContext": {"sysctls": [{"name": "net.ipv4.tcp_rmem"}]},
            "containers": [container(runAsUser=0, **GOOD)]}
    assert detail(LevelVersion("baseline", Version(1, 31)), spec) == \
        "forbidden sysctls (net.ipv4.tcp_rmem)"
    assert EVALUATOR.evaluate(LevelVersion("baseline", Version(1, 32)), {}, spec).allowed
    # runAsUser=0 is refused from 1.23 on.
    assert EVALUATOR.evaluate(LevelVersion("restricted", Version(1, 22)), {},
                              {"securityContext": {"sysctls": []},
                               "containers": [container(runAsUser=0, **GOOD)]}).allowed
    assert detail(LevelVersion("restricted", Version(1, 40)), {
        "containers": [container(runAsUser=0, **GOOD)]}) == \
        'runAsUser=0 (container "c" must not set runAsUser=0)'
    # Windows pods need not set Linux-only fields from 1.25 on.
    windows = {"os": {"name": "windows"}, "securityContext": {"runAsNonRoot": True},
               "containers": [container()]}
    assert EVALUATOR.evaluate(RESTRICTED, {}, windows).allowed
    assert "allowPrivilegeEscalation" in detail(LevelVersion("restricted", Version(1, 24)),
                                                windows)


def test_labels_choose_the_policy_and_warn_follows_a_stricter_enforce():
    defaults = Policy()
    policy, errs = policy_to_evaluate({"pod-security.kubernetes.io/enforce": "baseline",
                                       "pod-security.kubernetes.io/enforce-version": "v1.29",
                                       "pod-security.kubernetes.io/audit": "restricted"},
                                      defaults)
    assert not errs
    assert str(policy.enforce) == "baseline:v1.29"
    assert str(policy.warn) == "baseline:v1.29"
    assert str(policy.audit) == "restricted:latest"


def test_bad_labels_fail_closed_for_enforce_and_open_for_audit_and_warn():
    policy, errs = policy_to_evaluate({"pod-security.kubernetes.io/enforce": "strict",
                                       "pod-security.kubernetes.io/warn": "x",
                                       "pod-security.kubernetes.io/audit-version": "1.2"},
                                      Policy())
    assert [str(e) for e in errs] == [
        'metadata.labels[pod-security.kubernetes.io/enforce]: Invalid value: "strict": '
        'must be one of privileged, baseline, restricted',
        'metadata.labels[pod-security.kubernetes.io/audit-version]: Invalid value: "1.2": '
        'must be "latest" or "v1.x"',
        'metadata.labels[pod-security.kubernetes.io/warn]: Invalid value: "x": '
        'must be one of privileged, baseline, restricted']
    assert policy.enforce == LevelVersion("restricted", LATEST_VERSION)
    assert policy.warn.level == "privileged" and policy.audit.level == "privileged"


def test_configuration_defaults_and_validation():
    config = parse_configuration({
        "apiVersion": "pod-security.admission.config.k8s.io/v1",
        "kind": "PodSecurityConfiguration",
        "defaults": {"enforce": "baseline", "warn": "restricted", "warn-version": "v1.30"},
        "exemptions": {"namespaces": ["kube-system"], "usernames": ["ci"]}})
    assert str(config.defaults.enforce) == "baseline:latest"
    assert str(config.defaults.warn) == "restricted:v1.30"
    assert str(config.defaults.audit) == "privileged:latest"
    assert config.namespaces == ("kube-system",) and config.usernames == ("ci",)
    assert parse_configuration(None).namespaces == ()
    with pytest.raises(ConfigError) as failure:
        parse_configuration({"apiVersion": "pod-security.admission.config.k8s.io/v1beta1",
                             "kind": "PodSecurityConfiguration",
                             "defaults": {"audit": "none"},
                             "exemptions": {"namespaces": ["Bad_NS", "a", "a"],
                                            "usernames": [""]}})
    text = str(failure.value)
    assert 'defaults.audit: Invalid value: "none": must be one of privileged, baseline, ' \
           'restricted' in text
    assert 'exemptions.namespaces[0]: Invalid value: "Bad_NS"' in text
    assert 'exemptions.namespaces[2]: Duplicate value: "a"' in text
    assert 'exemptions.usernames[0]: Invalid value: "": username must not be empty' in text
