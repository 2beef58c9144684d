"""Security contexts of pods and containers: users and groups, sysctls, seccomp, AppArmor,
Windows options, host namespaces, and the OS-specific restrictions of ``spec.os``
(``pkg/apis/core/validation``, 1.32)."""

from __future__ import annotations

import re

from ....apimachinery import validation as apivalidation
from ....apimachinery.field_errors import FieldError, FieldPath, GoValue
from ....apimachinery.gosyntax import POINTER_ADDRESS, go_str
from .. import helpers
from .common import (INT32_MAX, byte_len, d, dicts, opt, opt_bool, opt_int, opt_str, s, strs,
                     validate_local_descending_path)
from .options import PodValidationOptions

SYSCTL_SEGMENT_FMT = "[a-z0-9]([-_a-z0-9]*[a-z0-9])?"
SYSCTL_CONTAIN_SLASH_FMT = f"({SYSCTL_SEGMENT_FMT}[\\./])*{SYSCTL_SEGMENT_FMT}"
SYSCTL_MAX_LENGTH = 253
_SYSCTL = re.compile(SYSCTL_CONTAIN_SLASH_FMT)
_SYSCTL_ERROR = (f"must have at most {SYSCTL_MAX_LENGTH} characters and match regex "
                 f"^{SYSCTL_CONTAIN_SLASH_FMT}$")

_SECCOMP_TYPES = ("Localhost", "RuntimeDefault", "Unconfined")
_APPARMOR_TYPES = ("Localhost", "RuntimeDefault", "Unconfined")
_FS_GROUP_CHANGE_POLICIES = ("Always", "OnRootMismatch")
_SUPPLEMENTAL_GROUPS_POLICIES = ("Merge", "Strict")
_SELINUX_CHANGE_POLICIES = ("MountOption", "Recursive")
_PROC_MOUNT_TYPES = ("Default", "Unmasked")

_MAX_GMSA_SPEC_KIB = 64
_MAX_RUN_AS_USER_NAME_DOMAIN = 256
_MAX_RUN_AS_USER_NAME_USER = 104
# Go's [[:cntrl:]] is ASCII control characters.
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
_NETBIOS = re.compile(r'^[^\\/:\*\?"<>|\.][^\\/:\*\?"<>|]{0,14}$')
_DNS_LABEL = r"[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?"
_WINDOWS_DOMAIN_DNS = re.compile(rf"^{_DNS_LABEL}(?:\.{_DNS_LABEL})*$")
_INVALID_USER_CHARS = re.compile(r'["/\\:;|=,\+\*\?<>@\[\]]')
_ONLY_DOTS_SPACES = re.compile(r"^[\. ]+$")


def _id_errors(value: int) -> list[str]:
    # IsValidUserID / IsValidGroupID
    return [] if 0 <= value <= INT32_MAX else [apivalidation.inclusive_range_error(0,
                                                                                   INT32_MAX)]


def _validate_id(container: dict, key: str, path: FieldPath) -> list[FieldError]:
    value = opt_int(container, key)
    if value is None:
        return []
    return [FieldError.invalid(path.child(key), value, msg) for msg in _id_errors(value)]


def _go_seccomp_profile(profile: dict) -> GoValue:
    present = opt_str(profile, "localhostProfile") is not None
    return GoValue(f"core.SeccompProfile{{Type:{go_str(profile.get('type'))}, "
                   f"LocalhostProfile:(*string)({POINTER_ADDRESS if present else 'nil'})}}")


def validate_seccomp_profile_field(profile: dict | None, path: FieldPath) -> list[FieldError]:
    """``validateSeccompProfileField``."""
    if profile is None:
        return []
    errs = []
    kind = s(profile, "type")
    if not kind:
        errs.append(FieldError.required(path.child("type"),
                                        "type is required when seccompProfile is set"))
    elif kind not in _SECCOMP_TYPES:
        errs.append(FieldError.not_supported(path.child("type"), kind, _SECCOMP_TYPES))
    localhost = opt_str(profile, "localhostProfile")
    if kind == "Localhost":
        if localhost is None:
            errs.append(FieldError.required(path.child("localhostProfile"),
                                            "must be set when seccomp type is Localhost"))
        else:
            errs += validate_local_descending_path(localhost, path.child("localhostProfile"))
    elif localhost is not None:
        errs.append(FieldError.invalid(path.child("localhostProfile"),
                                       _go_seccomp_profile(profile),
                                       "can only be set when seccomp type is Localhost"))
    return errs


def validate_apparmor_profile_field(profile: dict | None, path: FieldPath) -> list[FieldError]:
    """``ValidateAppArmorProfileField``."""
    if profile is None:
        return []
    errs = []
    kind = s(profile, "type")
    localhost = opt_str(profile, "localhostProfile")
    if kind == "Localhost":
        if localhost is None:
            errs.append(FieldError.required(path.child("localhostProfile"),
                                            "must be set when AppArmor type is Localhost"))
        else:
            stripped = localhost.strip(helpers_space())
            if stripped != localhost:
                errs.append(FieldError.invalid(path.child("localhostProfile"), localhost,
                                               "must not be padded with whitespace"))
            elif not stripped:
                errs.append(FieldError.required(path.child("localhostProfile"),
                                                "must be set when AppArmor type is Localhost"))
            if byte_len(localhost) > 4095:
                errs.append(FieldError.too_long(path.child("localhostProfile"), "", 4095))
    elif kind in ("RuntimeDefault", "Unconfined"):
        if localhost is not None:
            errs.append(FieldError.invalid(path.child("localhostProfile"), localhost,
                                           "can only be set when AppArmor type is Localhost"))
    elif not kind:
        errs.append(FieldError.required(path.child("type"),
                                        "type is required when appArmorProfile is set"))
    else:
        errs.append(FieldError.not_supported(path.child("type"), kind, _APPARMOR_TYPES))
    return errs


def helpers_space() -> str:
    """What ``strings.TrimSpace`` trims (``unicode.IsSpace``)."""
    return "\t\n\v\f\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007" \
           "\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000"


def validate_windows_options(options: dict | None, path: FieldPath) -> list[FieldError]:
    """``validateWindowsSecurityContextOptions``."""
    if options is None:
        return []
    errs = []
    spec_name = opt_str(options, "gmsaCredentialSpecName")
    if spec_name is not None:
        errs += [FieldError.invalid(path.child("gmsaCredentialSpecName"), spec_name, msg)
                 for msg in apivalidation.is_dns1123_subdomain(spec_name)]
    cred_spec = opt_str(options, "gmsaCredentialSpec")
    if cred_spec is not None:
        length = byte_len(cred_spec)
        if length == 0:
            errs.append(FieldError.invalid(path.child("gmsaCredentialSpec"), cred_spec,
                                           "gmsaCredentialSpec cannot be an empty string"))
        elif length > _MAX_GMSA_SPEC_KIB * 1024:
            errs.append(FieldError.invalid(path.child("gmsaCredentialSpec"), cred_spec,
                                           f"gmsaCredentialSpec size must be under "
                                           f"{_MAX_GMSA_SPEC_KIB} KiB"))
    user_name = opt_str(options, "runAsUserName")
    if user_name is not None:
        errs += _validate_run_as_user_name(user_name, path.child("runAsUserName"))
    return errs


def _validate_run_as_user_name(name: str, path: FieldPath) -> list[FieldError]:
    def invalid(message: str) -> FieldError:
        return FieldError.invalid(path, name, message)
    if not name:
        return [invalid("runAsUserName cannot be an empty string")]
    if _CONTROL.search(name):
        return [invalid("runAsUserName cannot contain control characters")]
    parts = name.split("\\")
    if len(parts) > 2:
        return [invalid("runAsUserName cannot contain more than one backslash")]
    errs = []
    has_domain = len(parts) == 2
    domain, user = (parts[0], parts[1]) if has_domain else ("", parts[0])
    if byte_len(domain) >= _MAX_RUN_AS_USER_NAME_DOMAIN:
        errs.append(invalid(f"runAsUserName's Domain length must be under "
                            f"{_MAX_RUN_AS_USER_NAME_DOMAIN} characters"))
    if has_domain and not (_NETBIOS.search(domain) or _WINDOWS_DOMAIN_DNS.search(domain)):
        errs.append(invalid("runAsUserName's Domain doesn't match the NetBios nor the DNS "
                            "format"))
    length = byte_len(user)
    if length == 0:
        errs.append(invalid("runAsUserName's User cannot be empty"))
    elif length > _MAX_RUN_AS_USER_NAME_USER:
        errs.append(invalid(f"runAsUserName's User length must not be longer than "
                            f"{_MAX_RUN_AS_USER_NAME_USER} characters"))
    if _ONLY_DOTS_SPACES.search(user):
        errs.append(invalid("runAsUserName's User cannot contain only periods or spaces"))
    if _INVALID_USER_CHARS.search(user):
        errs.append(invalid('runAsUserName\'s User cannot contain the following characters: '
                            '"/\\:;|=,+*?<>@[]'))
    return errs


def is_valid_sysctl_name(name: str) -> bool:
    """``IsValidSysctlName``."""
    return len(name) <= SYSCTL_MAX_LENGTH and _SYSCTL.fullmatch(name) is not None


def validate_host_sysctl(name: str, spec: dict, path: FieldPath) -> FieldError | None:
    """``ValidateHostSysctl``: a namespaced sysctl in a pod sharing that namespace."""
    namespace = helpers.sysctl_namespace(name)
    if spec.get("hostNetwork") is True and namespace == helpers.NET_NAMESPACE:
        return FieldError.invalid(path, name, "may not be specified when 'hostNetwork' is true")
    if spec.get("hostIPC") is True and namespace == helpers.IPC_NAMESPACE:
        return FieldError.invalid(path, name, "may not be specified when 'hostIPC' is true")
    return None


def _validate_sysctls(sysctls: list, spec: dict, path: FieldPath,
                      opts: PodValidationOptions) -> list[FieldError]:
    errs = []
    names: set[str] = set()
    for index, sysctl in enumerate(dicts(sysctls)):
        name = s(sysctl, "name")
        name_path = path.index(index).child("name")
        if not name:
            errs.append(FieldError.required(name_path, ""))
        elif not is_valid_sysctl_name(name):
            errs.append(FieldError.invalid(name_path, name, _SYSCTL_ERROR))
        elif name in names:
            errs.append(FieldError.duplicate(name_path, name))
        if not opts.allow_namespaced_sysctls_for_host_net_and_host_ipc:
            error = validate_host_sysctl(name, spec, name_path)
            if error is not None:
                errs.append(error)
        names.add(name)
    return errs


def validate_pod_security_context(spec: dict, path: FieldPath,
                                  opts: PodValidationOptions) -> list[FieldError]:
    """``validatePodSpecSecurityContext`` (``path`` is ``spec.securityContext``). The
    internal type always has a security context: it holds the host namespace fields."""
    context = d(spec, "securityContext")
    errs = []
    for key in ("fsGroup", "runAsUser", "runAsGroup"):
        errs += _validate_id(context, key, path)
    groups = context.get("supplementalGroups")
    for index, gid in enumerate(groups if isinstance(groups, list) else []):
        if isinstance(gid, int) and not isinstance(gid, bool):
            errs += [FieldError.invalid(path.child("supplementalGroups").index(index), gid, msg)
                     for msg in _id_errors(gid)]
    share = opt_bool(spec, "shareProcessNamespace")
    if share and spec.get("hostPID") is True:
        errs.append(FieldError.invalid(path.child("shareProcessNamespace"), share,
                                       "ShareProcessNamespace and HostPID cannot both be enabled"))
    sysctls = context.get("sysctls")
    if isinstance(sysctls, list) and sysctls:
        errs += _validate_sysctls(sysctls, spec, path.child("sysctls"), opts)
    policy = opt_str(context, "fsGroupChangePolicy")
    if policy is not None and policy not in _FS_GROUP_CHANGE_POLICIES:
        errs.append(FieldError.not_supported(path.child("fsGroupChangePolicy"), policy,
                                             _FS_GROUP_CHANGE_POLICIES))
    errs += validate_seccomp_profile_field(opt(context, "seccompProfile"),
                                           path.child("seccompProfile"))
    errs += validate_windows_options(opt(context, "windowsOptions"), path.child("windowsOptions"))
    errs += validate_apparmor_profile_field(opt(context, "appArmorProfile"),
                                            path.child("appArmorProfile"))
    groups_policy = opt_str(context, "supplementalGroupsPolicy")
    if groups_policy is not None and groups_policy not in _SUPPLEMENTAL_GROUPS_POLICIES:
        errs.append(FieldError.not_supported(path.child("supplementalGroupsPolicy"),
                                             groups_policy, _SUPPLEMENTAL_GROUPS_POLICIES))
    change_policy = opt_str(context, "seLinuxChangePolicy")
    if change_policy is not None:
        if opts.allow_only_recursive_selinux_change_policy:
            if change_policy != "Recursive":
                errs.append(FieldError.not_supported(path.child("seLinuxChangePolicy"),
                                                     change_policy, ["Recursive"]))
        elif change_policy not in _SELINUX_CHANGE_POLICIES:
            errs.append(FieldError.not_supported(path.child("seLinuxChangePolicy"),
                                                 change_policy, _SELINUX_CHANGE_POLICIES))
    return errs


def _go_security_context(context: dict) -> GoValue:
    # %#v of a core.SecurityContext: its pointer members print as addresses.
    def pointer(key, type_name):
        return f"(*{type_name})({POINTER_ADDRESS if context.get(key) is not None else 'nil'})"
    return GoValue(
        "core.SecurityContext{"
        f"Capabilities:{pointer('capabilities', 'core.Capabilities')}, "
        f"Privileged:{pointer('privileged', 'bool')}, "
        f"SELinuxOptions:{pointer('seLinuxOptions', 'core.SELinuxOptions')}, "
        f"WindowsOptions:{pointer('windowsOptions', 'core.WindowsSecurityContextOptions')}, "
        f"RunAsUser:{pointer('runAsUser', 'int64')}, "
        f"RunAsGroup:{pointer('runAsGroup', 'int64')}, "
        f"RunAsNonRoot:{pointer('runAsNonRoot', 'bool')}, "
        f"ReadOnlyRootFilesystem:{pointer('readOnlyRootFilesystem', 'bool')}, "
        f"AllowPrivilegeEscalation:{pointer('allowPrivilegeEscalation', 'bool')}, "
        f"ProcMount:{pointer('procMount', 'core.ProcMountType')}, "
        f"SeccompProfile:{pointer('seccompProfile', 'core.SeccompProfile')}, "
        f"AppArmorProfile:{pointer('appArmorProfile', 'core.AppArmorProfile')}}}")


def validate_security_context(context: dict | None, path: FieldPath, host_users: bool,
                              opts: PodValidationOptions) -> list[FieldError]:
    """``ValidateSecurityContext``: a container's security context."""
    if context is None:
        return []
    errs = []
    privileged = opt_bool(context, "privileged")
    if privileged and not opts.allow_privileged:
        errs.append(FieldError.forbidden(path.child("privileged"), "disallowed by cluster policy"))
    errs += _validate_id(context, "runAsUser", path)
    errs += _validate_id(context, "runAsGroup", path)
    proc_mount = opt_str(context, "procMount")
    if proc_mount is not None:
        if proc_mount not in _PROC_MOUNT_TYPES:
            errs.append(FieldError.not_supported(path.child("procMount"), proc_mount,
                                                 _PROC_MOUNT_TYPES))
        if host_users and proc_mount == "Unmasked":
            errs.append(FieldError.invalid(path.child("procMount"), proc_mount,
                                           "`hostUsers` must be false to use `Unmasked`"))
    errs += validate_seccomp_profile_field(opt(context, "seccompProfile"),
                                           path.child("seccompProfile"))
    if opt_bool(context, "allowPrivilegeEscalation") is False:
        if privileged:
            errs.append(FieldError.invalid(path, _go_security_context(context),
                                           "cannot set `allowPrivilegeEscalation` to false and "
                                           "`privileged` to true"))
        capabilities = opt(context, "capabilities")
        if capabilities is not None:
            for capability in strs(capabilities.get("add")):
                if capability == "CAP_SYS_ADMIN":
                    errs.append(FieldError.invalid(path, _go_security_context(context),
                                                   "cannot set `allowPrivilegeEscalation` to "
                                                   "false and `capabilities.Add` CAP_SYS_ADMIN"))
    errs += validate_windows_options(opt(context, "windowsOptions"), path.child("windowsOptions"))
    errs += validate_apparmor_profile_field(opt(context, "appArmorProfile"),
                                            path.child("appArmorProfile"))
    return errs


def host_users(spec: dict) -> bool:
    """Whether the pod uses the host's user namespace (``hostUsers`` unset means yes)."""
    return opt_bool(spec, "hostUsers") is not False


def validate_host_users(spec: dict, path: FieldPath) -> list[FieldError]:
    """``validateHostUsers``: no host namespaces in a user-namespaced pod."""
    if host_users(spec):
        return []
    errs = []
    message = "when `pod.Spec.HostUsers` is false"
    if spec.get("hostNetwork") is True:
        errs.append(FieldError.forbidden(path.child("hostNetwork"), message))
    if spec.get("hostPID") is True:
        errs.append(FieldError.forbidden(path.child("HostPID"), message))
    if spec.get("hostIPC") is True:
        errs.append(FieldError.forbidden(path.child("HostIPC"), message))
    return errs


def validate_windows_host_process_pod(spec: dict, path: FieldPath,
                                      opts: PodValidationOptions) -> list[FieldError]:
    """``validateWindowsHostProcessPod``: all or no containers are HostProcess ones."""
    errs = []
    pod_options = opt(d(spec, "securityContext"), "windowsOptions")
    pod_host_process = opt_bool(pod_options, "hostProcess") if pod_options else None
    count = host_process_count = 0
    for container, container_path in helpers.visit_containers_with_path(spec, path):
        count += 1
        options = opt(d(container, "securityContext"), "windowsOptions")
        container_host_process = opt_bool(options, "hostProcess") if options else None
        if pod_host_process is not None and container_host_process is not None and \
                pod_host_process != container_host_process:
            errs.append(FieldError.invalid(
                container_path.child("securityContext", "windowsOptions", "hostProcess"),
                container_host_process, "pod hostProcess value must be identical if both are "
                f"specified, was {'true' if pod_host_process else 'false'}"))
        if container_host_process or (container_host_process is None and pod_host_process):
            host_process_count += 1
    if host_process_count > 0:
        if host_process_count != count:
            errs.append(FieldError.invalid(path, "", "If pod contains any hostProcess "
                                                     "containers then all containers must be "
                                                     "HostProcess containers"))
        host_network = spec.get("hostNetwork") is True
        if not host_network:
            errs.append(FieldError.invalid(path.child("hostNetwork"), host_network,
                                           "hostNetwork must be true if pod contains any "
                                           "hostProcess containers"))
        if not opts.allow_privileged:
            errs.append(FieldError.forbidden(path, "hostProcess containers are disallowed by "
                                                   "cluster policy"))
    return errs


def validate_linux(spec: dict, path: FieldPath) -> list[FieldError]:
    """``validateLinux``: no Windows options in a Linux pod."""
    errs = []
    if opt(d(spec, "securityContext"), "windowsOptions") is not None:
        errs.append(FieldError.forbidden(path.child("securityContext", "windowsOptions"),
                                         "windows options cannot be set for a linux pod"))
    for container, container_path in helpers.visit_containers_with_path(spec, path):
        if opt(d(container, "securityContext"), "windowsOptions") is not None:
            errs.append(FieldError.forbidden(
                container_path.child("securityContext", "windowsOptions"),
                "windows options cannot be set for a linux pod"))
    return errs


def validate_windows(spec: dict, path: FieldPath) -> list[FieldError]:
    """``validateWindows``: none of the Linux-only settings in a Windows pod."""
    errs = []
    message = "cannot be set for a windows pod"
    context = d(spec, "securityContext")
    # The internal type always has a security context: it holds the host namespace fields.
    context_path = path.child("securityContext")
    checks = (
        (context.get("appArmorProfile") is not None, context_path.child("appArmorProfile")),
        (context.get("seLinuxOptions") is not None, context_path.child("seLinuxOptions")),
        (spec.get("hostUsers") is not None, path.child("hostUsers")),
        (spec.get("hostPID") is True, path.child("hostPID")),
        (spec.get("hostIPC") is True, path.child("hostIPC")),
        (context.get("seccompProfile") is not None, context_path.child("seccompProfile")),
        (context.get("fsGroup") is not None, context_path.child("fsGroup")),
        (context.get("fsGroupChangePolicy") is not None,
         context_path.child("fsGroupChangePolicy")),
        (bool(context.get("sysctls")), context_path.child("sysctls")),
        (spec.get("shareProcessNamespace") is not None,
         path.child("shareProcessNamespace")),
        (context.get("runAsUser") is not None, context_path.child("runAsUser")),
        (context.get("runAsGroup") is not None, context_path.child("runAsGroup")),
        (context.get("supplementalGroups") is not None,
         context_path.child("supplementalGroups")),
        (context.get("supplementalGroupsPolicy") is not None,
         context_path.child("supplementalGroupsPolicy")),
        (context.get("seLinuxChangePolicy") is not None,
         context_path.child("seLinuxChangePolicy")),
    )
    errs += [FieldError.forbidden(field_path, message) for bad, field_path in checks if bad]
    container_fields = ("appArmorProfile", "seLinuxOptions", "seccompProfile", "capabilities",
                        "readOnlyRootFilesystem", "privileged", "allowPrivilegeEscalation",
                        "procMount", "runAsUser", "runAsGroup")
    for container, container_path in helpers.visit_containers_with_path(spec, path):
        container_context = opt(container, "securityContext")
        if container_context is None:
            continue
        context_path = container_path.child("securityContext")
        errs += [FieldError.forbidden(context_path.child(key), message)
                 for key in container_fields if container_context.get(key) is not None]
    return errs


def validate_os(spec: dict, path: FieldPath) -> list[FieldError]:
    """``validateOS``: ``spec.os.name`` is linux or windows."""
    os = opt(spec, "os")
    if os is None:
        return []
    name = s(os, "name")
    if not name:
        return [FieldError.required(path.child("name"), "cannot be empty")]
    if name not in ("linux", "windows"):
        return [FieldError.not_supported(path, name, ("linux", "windows"))]
    return []
