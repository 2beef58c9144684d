"""Pod tolerations compared and merged as upstream's admission plugins do
(``pkg/util/tolerations``, ``helper.AddOrUpdateTolerationInPod``).

Tolerations are v1 JSON dicts; an absent field is its zero value (``""``, or no
``tolerationSeconds``), as Go's ``Semantic.DeepEqual`` of the structs sees them.
"""

from __future__ import annotations

import copy

EXISTS, EQUAL = "Exists", "Equal"
NO_EXECUTE = "NoExecute"


def _fields(toleration: dict) -> tuple:
    """The comparable value of a toleration (absent strings are empty)."""
    def text(name):
        value = toleration.get(name)
        return value if isinstance(value, str) else ""

    seconds = toleration.get("tolerationSeconds")
    if isinstance(seconds, bool) or not isinstance(seconds, int):
        seconds = None
    return (text("key"), text("operator"), text("value"), text("effect"), seconds)


def equal(first: dict, second: dict) -> bool:
    """``Semantic.DeepEqual`` of two tolerations."""
    return _fields(first) == _fields(second)


def is_superset(ss: dict, t: dict) -> bool:
    """``isSuperset``: ``ss`` tolerates at least what ``t`` tolerates."""
    if equal(t, ss):
        return True
    s_key, s_op, s_value, s_effect, s_seconds = _fields(ss)
    t_key, t_op, t_value, t_effect, t_seconds = _fields(t)
    # An empty key with Exists matches every key and value.
    if t_key != s_key and (s_key != "" or s_op != EXISTS):
        return False
    # An empty effect matches every effect.
    if t_effect != s_effect and s_effect != "":
        return False
    if s_effect == NO_EXECUTE and s_seconds is not None:
        if t_seconds is None or t_seconds > s_seconds:
            return False
    if s_op in (EQUAL, ""):  # an empty operator means Equal
        return t_op == EQUAL and t_value == s_value
    return s_op == EXISTS


def merge(first: list, second: list) -> list:
    """``MergeTolerations``: both lists, first then second, without the tolerations another
    one kept covers (of two equal ones, the first stays). The result's tolerations are
    copies."""
    everything = [t for t in list(first or []) + list(second or []) if isinstance(t, dict)]
    merged: list[dict] = []
    for index, toleration in enumerate(everything):
        if any(is_superset(kept, toleration) for kept in merged):
            continue
        if any(not equal(toleration, later) and is_superset(later, toleration)
               for later in everything[index + 1:]):
            continue
        merged.append(copy.deepcopy(toleration))
    return merged


def verify_against_whitelist(tolerations: list, whitelist: list) -> bool:
    """``VerifyAgainstWhitelist``: every toleration is covered by one of the whitelist (an
    empty whitelist allows everything)."""
    if not whitelist or not tolerations:
        return True
    return all(any(is_superset(allowed, t) for allowed in whitelist if isinstance(allowed, dict))
               for t in tolerations if isinstance(t, dict))


def add_or_update(tolerations: list, toleration: dict) -> list:
    """``AddOrUpdateTolerationInPod``'s list: ``toleration`` replaces the ones with its key,
    operator, value and effect (``MatchToleration``), or is appended."""
    key, op, value, effect, _ = _fields(toleration)
    result, updated = [], False
    for existing in tolerations:
        if isinstance(existing, dict) and _fields(existing)[:4] == (key, op, value, effect):
            result.append(copy.deepcopy(toleration))
            updated = True
        else:
            result.append(existing)
    if not updated:
        result.append(copy.deepcopy(toleration))
    return result
