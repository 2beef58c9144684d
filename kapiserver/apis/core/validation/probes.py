"""Probes and lifecycle hooks (``validateProbe`` and its liveness/readiness/startup
variants, ``validateLifecycle``, ``validateHandler`` and each action)."""

from __future__ import annotations

from ....apimachinery import validation as apivalidation
from ....apimachinery.field_errors import FieldError, FieldPath
from .common import (dicts, i, invalid_each, lst, opt, opt_int, s, validate_nonnegative)
from .options import PodValidationOptions

_HTTP_SCHEMES = ("HTTP", "HTTPS")
_PROBE_HANDLERS = ("exec", "httpGet", "tcpSocket", "grpc")
_LIFECYCLE_HANDLERS = ("exec", "httpGet", "tcpSocket", "sleep")


def validate_port_num_or_name(port, path: FieldPath) -> list[FieldError]:
    """``ValidatePortNumOrName``: an IntOrString port, a number or an IANA name."""
    if isinstance(port, bool) or port is None:
        port = 0
    if isinstance(port, int):
        return invalid_each(path, port, apivalidation.is_valid_port_num(port))
    if isinstance(port, str):
        return invalid_each(path, port, apivalidation.is_valid_port_name(port))
    return [FieldError.internal(path, f"unknown type: {type(port).__name__}")]


def _validate_exec(action: dict, path: FieldPath) -> list[FieldError]:
    if not lst(action, "command"):
        return [FieldError.required(path.child("command"), "")]
    return []


def _validate_http_get(action: dict, path: FieldPath) -> list[FieldError]:
    errs = []
    if not s(action, "path"):
        errs.append(FieldError.required(path.child("path"), ""))
    errs += validate_port_num_or_name(action.get("port"), path.child("port"))
    scheme = s(action, "scheme")
    if scheme not in _HTTP_SCHEMES:
        errs.append(FieldError.not_supported(path.child("scheme"), scheme, _HTTP_SCHEMES))
    for header in dicts(action.get("httpHeaders")):
        name = s(header, "name")
        errs += invalid_each(path.child("httpHeaders"), name,
                             apivalidation.is_http_header_name(name))
    return errs


def _validate_tcp_socket(action: dict, path: FieldPath) -> list[FieldError]:
    return validate_port_num_or_name(action.get("port"), path.child("port"))


def _validate_grpc(action: dict, path: FieldPath) -> list[FieldError]:
    return validate_port_num_or_name(i(action, "port"), path.child("port"))


def _validate_sleep(action: dict, grace_period: int | None, path: FieldPath,
                    opts: PodValidationOptions) -> list[FieldError]:
    # A nil grace period is reported elsewhere; nothing more to say here.
    if grace_period is None:
        return []
    seconds = i(action, "seconds")
    if opts.allow_pod_lifecycle_sleep_action_zero_value:
        if seconds < 0 or seconds > grace_period:
            return [FieldError.invalid(path, seconds, "must be non-negative and less than "
                                       f"terminationGracePeriodSeconds ({grace_period})")]
    elif seconds <= 0 or seconds > grace_period:
        return [FieldError.invalid(path, seconds, "must be greater than 0 and less than "
                                   f"terminationGracePeriodSeconds ({grace_period}). Enable "
                                   "AllowPodLifecycleSleepActionZeroValue feature gate for "
                                   "zero sleep.")]
    return []


def _validate_handler(handler: dict, kinds: tuple, grace_period: int | None, path: FieldPath,
                      opts: PodValidationOptions) -> list[FieldError]:
    """``validateHandler``: exactly one action of those ``kinds`` allows."""
    errs = []
    count = 0
    for kind in kinds:
        action = opt(handler, kind)
        if action is None:
            continue
        if count > 0:
            errs.append(FieldError.forbidden(path.child(kind),
                                             "may not specify more than 1 handler type"))
            continue
        count += 1
        action_path = path.child(kind)
        if kind == "exec":
            errs += _validate_exec(action, action_path)
        elif kind == "httpGet":
            errs += _validate_http_get(action, action_path)
        elif kind == "tcpSocket":
            errs += _validate_tcp_socket(action, action_path)
        elif kind == "grpc":
            errs += _validate_grpc(action, action_path)
        else:
            errs += _validate_sleep(action, grace_period, action_path, opts)
    if count == 0:
        errs.append(FieldError.required(path, "must specify a handler type"))
    return errs


def validate_lifecycle(lifecycle: dict, grace_period: int | None, path: FieldPath,
                       opts: PodValidationOptions) -> list[FieldError]:
    """``validateLifecycle``: ``postStart`` and ``preStop`` handlers."""
    errs = []
    for hook in ("postStart", "preStop"):
        handler = opt(lifecycle, hook)
        if handler is not None:
            errs += _validate_handler(handler, _LIFECYCLE_HANDLERS, grace_period,
                                      path.child(hook), opts)
    return errs


def validate_probe(probe: dict, grace_period: int | None, path: FieldPath,
                   opts: PodValidationOptions) -> list[FieldError]:
    """``validateProbe``: one handler, non-negative timings, a positive grace period."""
    errs = _validate_handler(probe, _PROBE_HANDLERS, grace_period, path, opts)
    for key in ("initialDelaySeconds", "timeoutSeconds", "periodSeconds", "successThreshold",
                "failureThreshold"):
        errs += validate_nonnegative(i(probe, key), path.child(key))
    grace = opt_int(probe, "terminationGracePeriodSeconds")
    if grace is not None and grace <= 0:
        errs.append(FieldError.invalid(path.child("terminationGracePeriodSeconds"), grace,
                                       "must be greater than 0"))
    return errs


def validate_liveness_probe(probe: dict | None, grace_period: int | None, path: FieldPath,
                            opts: PodValidationOptions) -> list[FieldError]:
    """``validateLivenessProbe`` (also startup probes): ``successThreshold`` must be 1."""
    if probe is None:
        return []
    errs = validate_probe(probe, grace_period, path, opts)
    if i(probe, "successThreshold") != 1:
        errs.append(FieldError.invalid(path.child("successThreshold"),
                                       i(probe, "successThreshold"), "must be 1"))
    return errs


validate_startup_probe = validate_liveness_probe


def validate_readiness_probe(probe: dict | None, grace_period: int | None, path: FieldPath,
                             opts: PodValidationOptions) -> list[FieldError]:
    """``validateReadinessProbe``: no ``terminationGracePeriodSeconds``."""
    if probe is None:
        return []
    errs = validate_probe(probe, grace_period, path, opts)
    grace = opt_int(probe, "terminationGracePeriodSeconds")
    if grace is not None:
        errs.append(FieldError.invalid(path.child("terminationGracePeriodSeconds"), grace,
                                       "must not be set for readinessProbes"))
    return errs
