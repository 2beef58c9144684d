"""The Pod Security Standards' checks, as ``k8s.io/pod-security-admission/policy`` 1.32 has them.

Each check looks at a pod's metadata and spec (JSON dicts, a pod's or a template's) and
answers a ``CheckResult``: allowed, or a short reason and an optional detail, worded as
upstream words them (``allowPrivilegeEscalation != false`` / ``container "c" must set
securityContext.allowPrivilegeEscalation=false``). ``Evaluator`` picks, for a level and a
policy version, the checks that apply: the baseline ones for ``baseline``; the restricted
ones plus the baseline ones they do not override for ``restricted``; baseline checks
first, each group in the order of their IDs, as upstream orders them.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from kapiserver.apimachinery.field_errors import go_quote

from .policy import BASELINE, PRIVILEGED, RESTRICTED, LevelVersion, Version, major_minor

WINDOWS = "windows"


@dataclass(frozen=True)
class CheckResult:
    allowed: bool = True
    reason: str = ""
    detail: str = ""


ALLOWED = CheckResult()


def forbid(reason: str, detail: str = "") -> CheckResult:
    return CheckResult(False, reason, detail)


@dataclass(frozen=True)
class AggregateResult:
    """``AggregateCheckResult``: the reasons and details of the checks that refused."""

    reasons: tuple = ()
    details: tuple = ()

    @property
    def allowed(self) -> bool:
        return not self.reasons

    def forbidden_reason(self) -> str:
        """``host ports, privileged containers``."""
        return ", ".join(self.reasons)

    def forbidden_detail(self) -> str:
        """``host ports (8080, 9090), privileged containers``."""
        return ", ".join(f"{reason} ({detail})" if detail else reason
                         for reason, detail in zip(self.reasons, self.details))


def aggregate(results) -> AggregateResult:
    refused = [r for r in results if not r.allowed]
    return AggregateResult(tuple(r.reason or "unknown forbidden reason" for r in refused),
                           tuple(r.detail for r in refused))


# -- helpers (``helpers.go``, ``visitor.go``) ------------------------------------------------

def _dict(value) -> dict:
    return value if isinstance(value, dict) else {}


def _list(value) -> list:
    return value if isinstance(value, list) else []


def join_quote(items) -> str:
    """``joinQuote``: ``"a", "b"``."""
    items = list(items)
    return '"' + '", "'.join(items) + '"' if items else ""


def pluralize(singular: str, plural: str, count: int) -> str:
    return singular if count == 1 else plural


def containers(spec: dict):
    """``visitContainers``: init containers, containers, then ephemeral containers."""
    for key in ("initContainers", "containers", "ephemeralContainers"):
        for container in _list(spec.get(key)):
            if isinstance(container, dict):
                yield container


def _name(container: dict) -> str:
    name = container.get("name")
    return name if isinstance(name, str) else ""


def _security_context(obj: dict) -> dict | None:
    context = obj.get("securityContext")
    return context if isinstance(context, dict) else None


def _pod_context(spec: dict) -> dict | None:
    return _security_context(spec)


def _is_windows(spec: dict) -> bool:
    return _dict(spec.get("os")).get("name") == WINDOWS


def _setters(pod_bad: bool, bad_containers: list) -> list[str]:
    """``pod`` and/or ``container(s) "a", "b"``, as the setter lists of the checks."""
    setters = ["pod"] if pod_bad else []
    if bad_containers:
        setters.append(f"{pluralize('container', 'containers', len(bad_containers))} "
                       f"{join_quote(bad_containers)}")
    return setters


def _containers_phrase(names: list) -> str:
    return f"{pluralize('container', 'containers', len(names))} {join_quote(names)}"


# -- baseline checks --------------------------------------------------------------------------

_APPARMOR_ANNOTATION_PREFIX = "container.apparmor.security.beta.kubernetes.io/"


def app_armor_profile_1_0(meta: dict, spec: dict) -> CheckResult:
    def allowed_type(profile) -> bool:
        return profile in ("RuntimeDefault", "Localhost")

    bad_setters, bad_values = [], set()
    profile = _dict(_pod_context(spec)).get("appArmorProfile")
    if isinstance(profile, dict) and not allowed_type(profile.get("type", "")):
        bad_setters.append("pod")
        bad_values.add(str(profile.get("type", "")))
    bad_containers = []
    for container in containers(spec):
        profile = _dict(_security_context(container)).get("appArmorProfile")
        if isinstance(profile, dict) and not allowed_type(profile.get("type", "")):
            bad_containers.append(_name(container))
            bad_values.add(str(profile.get("type", "")))
    if bad_containers:
        bad_setters.append(_containers_phrase(bad_containers))
    annotations = []
    for key, value in _dict(meta.get("annotations")).items():
        if key.startswith(_APPARMOR_ANNOTATION_PREFIX) and not (
                value == "" or value == "runtime/default" or value.startswith("localhost/")):
            annotations.append(f"{key}={go_quote(value)}")
    values = sorted(bad_values)
    if annotations:
        values += sorted(annotations)
        bad_setters.append(pluralize("annotation", "annotations", len(annotations)))
    if bad_setters:
        return forbid(pluralize("forbidden AppArmor profile", "forbidden AppArmor profiles",
                                len(values)),
                      f"{' and '.join(bad_setters)} must not set AppArmor profile type to "
                      f"{join_quote(values)}")
    return ALLOWED


CAPABILITIES_ALLOWED_1_0 = frozenset({
    "AUDIT_WRITE", "CHOWN", "DAC_OVERRIDE", "FOWNER", "FSETID", "KILL", "MKNOD",
    "NET_BIND_SERVICE", "SETFCAP", "SETGID", "SETPCAP", "SETUID", "SYS_CHROOT"})


def capabilities_baseline_1_0(meta: dict, spec: dict) -> CheckResult:
    bad_containers, non_default = [], set()
    for container in containers(spec):
        capabilities = _dict(_security_context(container)).get("capabilities")
        if not isinstance(capabilities, dict):
            continue
        added = [c for c in _list(capabilities.get("add")) if c not in CAPABILITIES_ALLOWED_1_0]
        if added:
            non_default.update(str(c) for c in added)
            bad_containers.append(_name(container))
    if bad_containers:
        return forbid("non-default capabilities",
                      f"{_containers_phrase(bad_containers)} must not include "
                      f"{join_quote(sorted(non_default))} in securityContext.capabilities.add")
    return ALLOWED


def host_namespaces_1_0(meta: dict, spec: dict) -> CheckResult:
    found = [f"{name}=true" for name in ("hostNetwork", "hostPID", "hostIPC")
             if spec.get(name) is True]
    if found:
        return forbid("host namespaces", ", ".join(found))
    return ALLOWED


def host_path_volumes_1_0(meta: dict, spec: dict) -> CheckResult:
    volumes = [str(v.get("name", "")) for v in _list(spec.get("volumes"))
               if isinstance(v, dict) and v.get("hostPath") is not None]
    if volumes:
        return forbid("hostPath volumes",
                      f"{pluralize('volume', 'volumes', len(volumes))} {join_quote(volumes)}")
    return ALLOWED


def host_ports_1_0(meta: dict, spec: dict) -> CheckResult:
    bad_containers, ports = [], set()
    for container in containers(spec):
        used = [p.get("hostPort") for p in _list(container.get("ports"))
                if isinstance(p, dict) and p.get("hostPort")]
        if used:
            ports.update(str(p) for p in used)
            bad_containers.append(_name(container))
    if bad_containers:
        return forbid("hostPort", " ".join((
            pluralize("container", "containers", len(bad_containers)),
            join_quote(bad_containers),
            pluralize("uses", "use", len(bad_containers)),
            pluralize("hostPort", "hostPorts", len(ports)),
            ", ".join(sorted(ports)))))
    return ALLOWED


def privileged_1_0(meta: dict, spec: dict) -> CheckResult:
    bad = [_name(c) for c in containers(spec)
           if _dict(_security_context(c)).get("privileged") is True]
    if bad:
        return forbid("privileged",
                      f"{_containers_phrase(bad)} must not set securityContext.privileged=true")
    return ALLOWED


def proc_mount_1_0(meta: dict, spec: dict) -> CheckResult:
    # The relaxation for user-namespaced pods needs the UserNamespacesPodSecurityStandards
    # gate, off in 1.32.
    bad_containers, types = [], set()
    for container in containers(spec):
        mount = _dict(_security_context(container)).get("procMount")
        if mount is not None and mount != "Default":
            bad_containers.append(_name(container))
            types.add(str(mount))
    if bad_containers:
        return forbid("procMount", f"{_containers_phrase(bad_containers)} must not set "
                                   f"securityContext.procMount to {join_quote(sorted(types))}")
    return ALLOWED


SELINUX_TYPES_1_0 = frozenset({"", "container_t", "container_init_t", "container_kvm_t"})
SELINUX_TYPES_1_31 = SELINUX_TYPES_1_0 | {"container_engine_t"}


def _selinux_options(spec: dict, allowed_types: frozenset) -> CheckResult:
    bad_types: set = set()
    flags = {"user": False, "role": False}

    def valid(options: dict) -> bool:
        ok = True
        kind = options.get("type") or ""
        if kind not in allowed_types:
            ok = False
            bad_types.add(kind)
        for key in ("user", "role"):
            if options.get(key):
                ok = False
                flags[key] = True
        return ok

    pod_options = _dict(_pod_context(spec)).get("seLinuxOptions")
    pod_bad = isinstance(pod_options, dict) and not valid(pod_options)
    bad_containers = []
    for container in containers(spec):
        options = _dict(_security_context(container)).get("seLinuxOptions")
        if isinstance(options, dict) and not valid(options):
            bad_containers.append(_name(container))
    setters = _setters(pod_bad, bad_containers)
    if setters:
        data = []
        if bad_types:
            data.append(f"{pluralize('type', 'types', len(bad_types))} "
                        f"{join_quote(sorted(bad_types))}")
        if flags["user"]:
            data.append("user may not be set")
        if flags["role"]:
            data.append("role may not be set")
        return forbid("seLinuxOptions",
                      f"{' and '.join(setters)} set forbidden securityContext.seLinuxOptions: "
                      f"{'; '.join(data)}")
    return ALLOWED


def selinux_options_1_0(meta: dict, spec: dict) -> CheckResult:
    return _selinux_options(spec, SELINUX_TYPES_1_0)


def selinux_options_1_31(meta: dict, spec: dict) -> CheckResult:
    return _selinux_options(spec, SELINUX_TYPES_1_31)


_SECCOMP_POD_ANNOTATION = "seccomp.security.alpha.kubernetes.io/pod"
_SECCOMP_CONTAINER_ANNOTATION_PREFIX = "container.seccomp.security.alpha.kubernetes.io/"


def _valid_seccomp(kind) -> bool:
    return kind in ("Localhost", "RuntimeDefault")


def _valid_seccomp_annotation(value: str) -> bool:
    return value in ("runtime/default", "docker/default") or value.startswith("localhost/")


def seccomp_profile_baseline_1_0(meta: dict, spec: dict) -> CheckResult:
    annotations = _dict(meta.get("annotations"))
    forbidden = set()
    if _SECCOMP_POD_ANNOTATION in annotations and \
            not _valid_seccomp_annotation(annotations[_SECCOMP_POD_ANNOTATION]):
        forbidden.add(f"{_SECCOMP_POD_ANNOTATION}="
                      f"{go_quote(annotations[_SECCOMP_POD_ANNOTATION])}")
    for container in containers(spec):
        key = _SECCOMP_CONTAINER_ANNOTATION_PREFIX + _name(container)
        if key in annotations and not _valid_seccomp_annotation(annotations[key]):
            forbidden.add(f"{key}={go_quote(annotations[key])}")
    if forbidden:
        return forbid("seccompProfile",
                      f"forbidden {pluralize('annotation', 'annotations', len(forbidden))} "
                      f"{', '.join(sorted(forbidden))}")
    return ALLOWED


def _seccomp_types(spec: dict):
    """(pod's profile dict or None, [(container, its profile dict or None)])."""
    pod = _dict(_pod_context(spec)).get("seccompProfile")
    pod = pod if isinstance(pod, dict) else None
    found = []
    for container in containers(spec):
        profile = _dict(_security_context(container)).get("seccompProfile")
        found.append((container, profile if isinstance(profile, dict) else None))
    return pod, found


def seccomp_profile_baseline_1_19(meta: dict, spec: dict) -> CheckResult:
    pod, found = _seccomp_types(spec)
    bad_values = set()
    pod_bad = pod is not None and not _valid_seccomp(pod.get("type"))
    if pod_bad:
        bad_values.add(str(pod.get("type") or ""))
    bad_containers = []
    for container, profile in found:
        if profile is not None and not _valid_seccomp(profile.get("type")):
            bad_containers.append(_name(container))
            bad_values.add(str(profile.get("type") or ""))
    setters = _setters(pod_bad, bad_containers)
    if setters:
        return forbid("seccompProfile", f"{' and '.join(setters)} must not set "
                                        "securityContext.seccompProfile.type to "
                                        f"{join_quote(sorted(bad_values))}")
    return ALLOWED


SYSCTLS_1_0 = frozenset({"kernel.shm_rmid_forced", "net.ipv4.ip_local_port_range",
                         "net.ipv4.tcp_syncookies", "net.ipv4.ping_group_range",
                         "net.ipv4.ip_unprivileged_port_start"})
SYSCTLS_1_27 = SYSCTLS_1_0 | {"net.ipv4.ip_local_reserved_ports"}
SYSCTLS_1_29 = SYSCTLS_1_27 | {"net.ipv4.tcp_keepalive_time", "net.ipv4.tcp_fin_timeout",
                               "net.ipv4.tcp_keepalive_intvl", "net.ipv4.tcp_keepalive_probes"}
SYSCTLS_1_32 = SYSCTLS_1_29 | {"net.ipv4.tcp_rmem", "net.ipv4.tcp_wmem"}


def _sysctls(allowed: frozenset):
    def check(meta: dict, spec: dict) -> CheckResult:
        names = [str(s.get("name", "")) for s in _list(_dict(_pod_context(spec)).get("sysctls"))
                 if isinstance(s, dict) and s.get("name", "") not in allowed]
        if names:
            return forbid("forbidden sysctls", ", ".join(names))
        return ALLOWED
    return check


def windows_host_process_1_0(meta: dict, spec: dict) -> CheckResult:
    def host_process(context) -> bool:
        return _dict(_dict(context).get("windowsOptions")).get("hostProcess") is True

    bad = [_name(c) for c in containers(spec) if host_process(_security_context(c))]
    setters = _setters(host_process(_pod_context(spec)), bad)
    if setters:
        return forbid("hostProcess", f"{' and '.join(setters)} must not set "
                                     "securityContext.windowsOptions.hostProcess=true")
    return ALLOWED


# -- restricted checks ------------------------------------------------------------------------

def allow_privilege_escalation_1_8(meta: dict, spec: dict) -> CheckResult:
    bad = [_name(c) for c in containers(spec)
           if _dict(_security_context(c)).get("allowPrivilegeEscalation") is not False]
    if bad:
        return forbid("allowPrivilegeEscalation != false",
                      f"{_containers_phrase(bad)} must set "
                      "securityContext.allowPrivilegeEscalation=false")
    return ALLOWED


def _unless_windows(check):
    """The 1.25 revisions: a pod whose ``spec.os.name`` is ``windows`` passes."""
    def windows_exempt(meta: dict, spec: dict) -> CheckResult:
        return ALLOWED if _is_windows(spec) else check(meta, spec)
    windows_exempt.__name__ = check.__name__.replace("_1_", "_1_25_from_1_")
    return windows_exempt


def capabilities_restricted_1_22(meta: dict, spec: dict) -> CheckResult:
    missing_drop, adding, forbidden_caps = [], [], set()
    for container in containers(spec):
        capabilities = _dict(_security_context(container)).get("capabilities")
        if not isinstance(capabilities, dict):
            missing_drop.append(_name(container))
            continue
        if "ALL" not in _list(capabilities.get("drop")):
            missing_drop.append(_name(container))
        added = [c for c in _list(capabilities.get("add")) if c != "NET_BIND_SERVICE"]
        if added:
            forbidden_caps.update(str(c) for c in added)
            adding.append(_name(container))
    details = []
    if missing_drop:
        details.append(f'{_containers_phrase(missing_drop)} must set '
                       'securityContext.capabilities.drop=["ALL"]')
    if adding:
        details.append(f"{_containers_phrase(adding)} must not include "
                       f"{join_quote(sorted(forbidden_caps))} in "
                       "securityContext.capabilities.add")
    if details:
        return forbid("unrestricted capabilities", "; ".join(details))
    return ALLOWED


_ALLOWED_VOLUME_SOURCES = ("configMap", "csi", "downwardAPI", "emptyDir", "ephemeral",
                           "persistentVolumeClaim", "projected", "secret")
#: The restricted volume sources, in the order upstream's switch tests them.
_RESTRICTED_VOLUME_SOURCES = (
    "hostPath", "gcePersistentDisk", "awsElasticBlockStore", "gitRepo", "nfs", "iscsi",
    "glusterfs", "rbd", "flexVolume", "cinder", "cephfs", "flocker", "fc", "azureFile",
    "vsphereVolume", "quobyte", "azureDisk", "photonPersistentDisk", "portworxVolume",
    "scaleIO", "storageos")


def restricted_volumes_1_0(meta: dict, spec: dict) -> CheckResult:
    bad_volumes, bad_types = [], set()
    for volume in _list(spec.get("volumes")):
        if not isinstance(volume, dict):
            continue
        if any(volume.get(source) is not None for source in _ALLOWED_VOLUME_SOURCES):
            continue
        bad_volumes.append(str(volume.get("name", "")))
        bad_types.add(next((source for source in _RESTRICTED_VOLUME_SOURCES
                            if volume.get(source) is not None), "unknown"))
    if bad_volumes:
        return forbid("restricted volume types", " ".join((
            pluralize("volume", "volumes", len(bad_volumes)), join_quote(bad_volumes),
            pluralize("uses", "use", len(bad_volumes)),
            pluralize("restricted volume type", "restricted volume types", len(bad_types)),
            join_quote(sorted(bad_types)))))
    return ALLOWED


def run_as_non_root_1_0(meta: dict, spec: dict) -> CheckResult:
    pod_value = _dict(_pod_context(spec)).get("runAsNonRoot")
    pod_bad = pod_value is False
    pod_non_root = pod_value is True
    explicit, implicit = [], []
    for container in containers(spec):
        value = _dict(_security_context(container)).get("runAsNonRoot")
        if value is not None:
            if value is False:
                explicit.append(_name(container))
        elif not pod_non_root:
            implicit.append(_name(container))
    setters = _setters(pod_bad, explicit)
    if setters:
        return forbid("runAsNonRoot != true", f"{' and '.join(setters)} must not set "
                                              "securityContext.runAsNonRoot=false")
    if implicit:
        return forbid("runAsNonRoot != true",
                      f"pod or {_containers_phrase(implicit)} must set "
                      "securityContext.runAsNonRoot=true")
    return ALLOWED


def run_as_user_1_23(meta: dict, spec: dict) -> CheckResult:
    def root(context) -> bool:
        value = _dict(context).get("runAsUser")
        return value == 0 and not isinstance(value, bool)

    bad = [_name(c) for c in containers(spec) if root(_security_context(c))]
    setters = _setters(root(_pod_context(spec)), bad)
    if setters:
        return forbid("runAsUser=0", f"{' and '.join(setters)} must not set runAsUser=0")
    return ALLOWED


def seccomp_profile_restricted_1_19(meta: dict, spec: dict) -> CheckResult:
    pod, found = _seccomp_types(spec)
    bad_values = set()
    pod_bad = pod is not None and not _valid_seccomp(pod.get("type"))
    pod_set = pod is not None and not pod_bad
    if pod_bad:
        bad_values.add(str(pod.get("type") or ""))
    explicit, implicit = [], []
    for container, profile in found:
        if profile is not None:
            if not _valid_seccomp(profile.get("type")):
                explicit.append(_name(container))
                bad_values.add(str(profile.get("type") or ""))
        elif not pod_set:
            implicit.append(_name(container))
    setters = _setters(pod_bad, explicit)
    if setters:
        return forbid("seccompProfile", f"{' and '.join(setters)} must not set "
                                        "securityContext.seccompProfile.type to "
                                        f"{join_quote(sorted(bad_values))}")
    if implicit:
        return forbid("seccompProfile",
                      f"pod or {_containers_phrase(implicit)} must set "
                      'securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost"')
    return ALLOWED


# -- the registry (``registry.go``) -----------------------------------------------------------

@dataclass(frozen=True)
class VersionedCheck:
    minimum: Version
    check: object
    overrides: tuple = ()


@dataclass(frozen=True)
class Check:
    id: str
    level: str
    versions: tuple = field(default_factory=tuple)


def _v(major: int, minor: int, check, overrides=()) -> VersionedCheck:
    return VersionedCheck(major_minor(major, minor), check, tuple(overrides))


#: Every check of the baseline and restricted profiles as of 1.32.
DEFAULT_CHECKS = (
    Check("appArmorProfile", BASELINE, (_v(1, 0, app_armor_profile_1_0),)),
    Check("capabilities_baseline", BASELINE, (_v(1, 0, capabilities_baseline_1_0),)),
    Check("hostNamespaces", BASELINE, (_v(1, 0, host_namespaces_1_0),)),
    Check("hostPathVolumes", BASELINE, (_v(1, 0, host_path_volumes_1_0),)),
    Check("hostPorts", BASELINE, (_v(1, 0, host_ports_1_0),)),
    Check("privileged", BASELINE, (_v(1, 0, privileged_1_0),)),
    Check("procMount", BASELINE, (_v(1, 0, proc_mount_1_0),)),
    Check("seLinuxOptions", BASELINE, (_v(1, 0, selinux_options_1_0),
                                       _v(1, 31, selinux_options_1_31))),
    Check("seccompProfile_baseline", BASELINE, (_v(1, 0, seccomp_profile_baseline_1_0),
                                                _v(1, 19, seccomp_profile_baseline_1_19))),
    Check("sysctls", BASELINE, (_v(1, 0, _sysctls(SYSCTLS_1_0)), _v(1, 27, _sysctls(SYSCTLS_1_27)),
                                _v(1, 29, _sysctls(SYSCTLS_1_29)),
                                _v(1, 32, _sysctls(SYSCTLS_1_32)))),
    Check("windowsHostProcess", BASELINE, (_v(1, 0, windows_host_process_1_0),)),
    Check("allowPrivilegeEscalation", RESTRICTED, (
        _v(1, 8, allow_privilege_escalation_1_8),
        _v(1, 25, _unless_windows(allow_privilege_escalation_1_8)))),
    Check("capabilities_restricted", RESTRICTED, (
        _v(1, 22, capabilities_restricted_1_22, ["capabilities_baseline"]),
        _v(1, 25, _unless_windows(capabilities_restricted_1_22), ["capabilities_baseline"]))),
    Check("restrictedVolumes", RESTRICTED, (
        _v(1, 0, restricted_volumes_1_0, ["hostPathVolumes"]),)),
    Check("runAsNonRoot", RESTRICTED, (_v(1, 0, run_as_non_root_1_0),)),
    Check("runAsUser", RESTRICTED, (_v(1, 23, run_as_user_1_23),)),
    Check("seccompProfile_restricted", RESTRICTED, (
        _v(1, 19, seccomp_profile_restricted_1_19, ["seccompProfile_baseline"]),
        _v(1, 25, _unless_windows(seccomp_profile_restricted_1_19),
           ["seccompProfile_baseline"]))),
)


def _at(check: Check, version: Version) -> VersionedCheck | None:
    """The revision of ``check`` in force at ``version``: the newest not newer than it."""
    found = None
    for revision in check.versions:
        if not version.older(revision.minimum):
            found = revision
    return found


class Evaluator:
    """``checkRegistry``: the checks of a level at a version, in upstream's order."""

    def __init__(self, checks=DEFAULT_CHECKS):
        self.checks = sorted((c for c in checks if c.level == BASELINE), key=lambda c: c.id) + \
            sorted((c for c in checks if c.level == RESTRICTED), key=lambda c: c.id)
        self.max_version = major_minor(1, 0)
        for check in self.checks:
            if self.max_version.older(check.versions[-1].minimum):
                self.max_version = check.versions[-1].minimum
        self._cache: dict = {}

    def checks_for(self, level: str, version: Version) -> list:
        """The check functions of ``level`` at ``version`` (``latest`` and versions past the
        newest check are the newest)."""
        if level == PRIVILEGED:
            return []
        if self.max_version.older(version):
            version = self.max_version
        key = (level, version)
        if key not in self._cache:
            revisions = [(c, _at(c, version)) for c in self.checks]
            revisions = [(c, r) for c, r in revisions if r is not None]
            if level == BASELINE:
                chosen = [r.check for c, r in revisions if c.level == BASELINE]
            else:
                overridden = {o for c, r in revisions if c.level == RESTRICTED
                              for o in r.overrides}
                chosen = [r.check for c, r in revisions if c.id not in overridden]
            self._cache[key] = chosen
        return self._cache[key]

    def evaluate(self, lv: LevelVersion, meta: dict, spec: dict) -> AggregateResult:
        meta = meta if isinstance(meta, dict) else {}
        spec = spec if isinstance(spec, dict) else {}
        return aggregate(check(meta, spec) for check in self.checks_for(lv.level, lv.version))
