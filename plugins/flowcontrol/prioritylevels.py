"""PriorityLevelConfigurations (with ``status``): ``ValidatePriorityLevelConfiguration`` of
``pkg/apis/flowcontrol/validation``, the v1 defaults and the ``prioritylevelconfiguration``
registry strategies of 1.32, as objects (how they limit requests is the API priority and
fairness filter's business)."""

from __future__ import annotations

import math

from kapiserver.apimachinery.field_errors import FieldError, FieldPath, GoValue
from kapiserver.apimachinery.gosyntax import go_pointer, go_str, go_struct
from kapiserver.apimachinery.validation import (name_is_dns_subdomain, validate_core_object_meta,
                                                validate_core_object_meta_update)
from kapiserver.registry.builtin import builtin_spec
from kapiserver.registry.builtin_strategy import BuiltinStrategy
from kapiserver.registry.printers import age

from .common import dict_of, keep_metadata_for_status, str_of, validate_status_conditions

PRIORITY_LEVELS = builtin_spec("flowcontrol.apiserver.k8s.io", "v1",
                               "prioritylevelconfigurations")
TYPES = ("Exempt", "Limited")
LIMIT_RESPONSE_TYPES = ("Queue", "Reject")
DEFAULT_HAND_SIZE, DEFAULT_QUEUES, DEFAULT_QUEUE_LENGTH_LIMIT = 8, 64, 50
DEFAULT_NOMINAL_CONCURRENCY_SHARES = 30
MAX_QUEUES = 10 * 1000 * 1000
#: ``shufflesharding.MaxHashBits``.
MAX_HASH_BITS = 60
EXEMPT, CATCH_ALL = "exempt", "catch-all"
#: ``internalbootstrap.MandatoryPriorityLevelConfigurations``, as v1 after defaulting.
MANDATORY_SPECS = {
    EXEMPT: {"type": "Exempt", "exempt": {"nominalConcurrencyShares": 0, "lendablePercent": 0}},
    CATCH_ALL: {"type": "Limited", "limited": {"nominalConcurrencyShares": 5,
                                               "limitResponse": {"type": "Reject"},
                                               "lendablePercent": 0}},
}


def _int(value) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def set_priority_level_defaults(obj: dict) -> None:
    """``SetDefaults_PriorityLevelConfiguration`` and the defaults of what it holds."""
    spec = dict_of(obj.get("spec"))
    limited = spec.get("limited")
    if isinstance(limited, dict):
        if limited.get("nominalConcurrencyShares") is None:
            limited["nominalConcurrencyShares"] = DEFAULT_NOMINAL_CONCURRENCY_SHARES
        if limited.get("lendablePercent") is None:
            limited["lendablePercent"] = 0
        queuing = dict_of(limited.get("limitResponse")).get("queuing")
        if isinstance(queuing, dict):
            for key, value in (("handSize", DEFAULT_HAND_SIZE), ("queues", DEFAULT_QUEUES),
                               ("queueLengthLimit", DEFAULT_QUEUE_LENGTH_LIMIT)):
                if not queuing.get(key):
                    queuing[key] = value
    exempt = spec.get("exempt")
    if isinstance(exempt, dict):
        for key in ("nominalConcurrencyShares", "lendablePercent"):
            if exempt.get(key) is None:
                exempt[key] = 0


def required_entropy_bits(deck_size: int, hand_size: int) -> int:
    """``shufflesharding.RequiredEntropyBits``: ceil(log2(deckSize^handSize))."""
    return math.ceil(math.log2(deck_size) * hand_size)


def _validate_queuing(queuing: dict, path: FieldPath) -> list[FieldError]:
    """``ValidatePriorityLevelQueuingConfiguration``."""
    errs = []
    limit = _int(queuing.get("queueLengthLimit"))
    if limit <= 0:
        errs.append(FieldError.invalid(path.child("queueLengthLimit"), limit, "must be positive"))
    queues, hand = _int(queuing.get("queues")), _int(queuing.get("handSize"))
    if queues <= 0:
        errs.append(FieldError.invalid(path.child("queues"), queues, "must be positive"))
    elif queues > MAX_QUEUES:
        errs.append(FieldError.invalid(path.child("queues"), queues,
                                       f"must not be greater than {MAX_QUEUES}"))
    if hand <= 0:
        errs.append(FieldError.invalid(path.child("handSize"), hand, "must be positive"))
    elif hand > queues:
        errs.append(FieldError.invalid(path.child("handSize"), hand,
                                       f"should not be greater than queues ({queues})"))
    elif required_entropy_bits(queues, hand) > MAX_HASH_BITS:
        errs.append(FieldError.invalid(path.child("handSize"), hand,
                                       f"required entropy bits of deckSize {queues} and handSize "
                                       f"{hand} should not be greater than {MAX_HASH_BITS}"))
    return errs


def _validate_limit_response(response: dict, path: FieldPath) -> list[FieldError]:
    """``ValidateLimitResponse``."""
    kind = response.get("type")
    queuing = response.get("queuing")
    if kind == "Reject":
        if queuing is not None:
            return [FieldError.forbidden(path.child("queuing"), "must be nil if "
                                         "limited.limitResponse.type is not Limited")]
        return []
    if kind == "Queue":
        if queuing is None:
            return [FieldError.required(path.child("queuing"), "must not be empty if "
                                        "limited.limitResponse.type is Limited")]
        return _validate_queuing(dict_of(queuing), path.child("queuing"))
    return [FieldError.not_supported(path.child("type"), str_of(kind), LIMIT_RESPONSE_TYPES)]


def _validate_lendable(config: dict, path: FieldPath) -> list[FieldError]:
    lendable = config.get("lendablePercent")
    if lendable is not None and not 0 <= _int(lendable) <= 100:
        return [FieldError.invalid(path.child("lendablePercent"), _int(lendable),
                                   "must be between 0 and 100, inclusive")]
    return []


def _validate_limited(limited: dict, path: FieldPath) -> list[FieldError]:
    """``ValidateLimitedPriorityLevelConfiguration`` (zero shares not allowed yet)."""
    errs = []
    shares = _int(limited.get("nominalConcurrencyShares"))
    if shares <= 0:
        errs.append(FieldError.invalid(path.child("nominalConcurrencyShares"), shares,
                                       "must be positive"))
    errs += _validate_limit_response(dict_of(limited.get("limitResponse")),
                                     path.child("limitResponse"))
    errs += _validate_lendable(limited, path)
    borrowing = limited.get("borrowingLimitPercent")
    if borrowing is not None and _int(borrowing) < 0:
        errs.append(FieldError.invalid(path.child("borrowingLimitPercent"), _int(borrowing),
                                       "if specified, must be a non-negative integer"))
    return errs


def _validate_exempt(exempt: dict, path: FieldPath) -> list[FieldError]:
    """``ValidateExemptPriorityLevelConfiguration``."""
    errs = []
    shares = exempt.get("nominalConcurrencyShares")
    if shares is not None and _int(shares) < 0:
        errs.append(FieldError.invalid(path.child("nominalConcurrencyShares"), _int(shares),
                                       "must be a non-negative integer"))
    return errs + _validate_lendable(exempt, path)


def validate_priority_level_spec(spec: dict, name: str, path: FieldPath) -> list[FieldError]:
    """``ValidatePriorityLevelConfigurationSpec``."""
    errs = []
    kind = str_of(spec.get("type"))
    if (name == EXEMPT) != (kind == "Exempt"):
        errs.append(FieldError.invalid(path.child("type"), kind,
                                       "type must be 'Exempt' if and only if name is 'exempt'"))
    if kind == "Exempt":
        if spec.get("limited") is not None:
            errs.append(FieldError.forbidden(path.child("limited"),
                                             "must be nil if the type is not Limited"))
        if spec.get("exempt") is not None:
            errs += _validate_exempt(dict_of(spec["exempt"]), path.child("exempt"))
    elif kind == "Limited":
        if spec.get("exempt") is not None:
            errs.append(FieldError.forbidden(path.child("exempt"),
                                             "must be nil if the type is Limited"))
        if spec.get("limited") is None:
            errs.append(FieldError.required(path.child("limited"),
                                            "must not be empty when type is Limited"))
        else:
            errs += _validate_limited(dict_of(spec["limited"]), path.child("limited"))
    else:
        errs.append(FieldError.not_supported(path.child("type"), kind, TYPES))
    return errs


def go_priority_level_spec(spec: dict) -> GoValue:
    """A ``flowcontrol.PriorityLevelConfigurationSpec`` as ``%#v`` prints it."""
    return GoValue(go_struct("flowcontrol.PriorityLevelConfigurationSpec", (
        ("Type", go_str(spec.get("type"))),
        ("Limited", go_pointer("flowcontrol.LimitedPriorityLevelConfiguration",
                               spec.get("limited") is not None)),
        ("Exempt", go_pointer("flowcontrol.ExemptPriorityLevelConfiguration",
                              spec.get("exempt") is not None)))))


def _validate_mandatory(name: str, spec: dict) -> list[FieldError]:
    """``ValidateIfMandatoryPriorityLevelConfigurationObject``: the ``exempt`` level may
    change its ``exempt`` settings, nothing else; ``catch-all`` nothing at all."""
    fixed = MANDATORY_SPECS.get(name)
    if fixed is None:
        return []
    if name == EXEMPT:
        have = {**spec, "exempt": fixed["exempt"]}
        if have != fixed:
            return [FieldError.invalid(FieldPath("spec"), go_priority_level_spec(spec),
                                       f"spec of '{name}' except the 'spec.exempt' field must "
                                       f"equal the fixed value")]
        return []
    if spec != fixed:
        return [FieldError.invalid(FieldPath("spec"), go_priority_level_spec(spec),
                                   f"spec of '{name}' must equal the fixed value")]
    return []


def validate_priority_level(obj: dict) -> list[FieldError]:
    """``ValidatePriorityLevelConfiguration``."""
    meta, spec = dict_of(obj.get("metadata")), dict_of(obj.get("spec"))
    name = str_of(meta.get("name"))
    errs = validate_core_object_meta(meta, False, name_is_dns_subdomain)
    errs += validate_priority_level_spec(spec, name, FieldPath("spec"))
    errs += _validate_mandatory(name, spec)
    return errs + validate_status_conditions(obj)


class PriorityLevelStrategy(BuiltinStrategy):
    """``pkg/registry/flowcontrol/prioritylevelconfiguration`` strategy."""

    has_generation = True

    def set_defaults(self, obj):
        set_priority_level_defaults(obj)

    def validate(self, obj):
        return validate_priority_level(obj)

    def validate_update(self, new, old):
        return validate_core_object_meta_update(dict_of(new.get("metadata")),
                                                dict_of(old.get("metadata"))) + \
            validate_priority_level(new)

    def prepare_status_update(self, new, old):
        super().prepare_status_update(new, old)
        keep_metadata_for_status(new, old)

    def validate_status(self, new, old):
        return validate_status_conditions(new)

    def table_cells(self, obj):
        meta, spec = dict_of(obj.get("metadata")), dict_of(obj.get("spec"))
        shares = queues = hand = length = "<none>"
        limited = spec.get("limited")
        if isinstance(limited, dict):
            shares = _int(limited.get("nominalConcurrencyShares"))
            queuing = dict_of(limited.get("limitResponse")).get("queuing")
            if isinstance(queuing, dict):
                queues, hand = _int(queuing.get("queues")), _int(queuing.get("handSize"))
                length = _int(queuing.get("queueLengthLimit"))
        return [meta.get("name", ""), str_of(spec.get("type")), shares, queues, hand, length,
                age(meta.get("creationTimestamp"))]
