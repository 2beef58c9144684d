"""How the seats of a server are shared out between priority levels that borrow and lend
(``util/flowcontrol/conc_alloc.go``): every level gets ``fairProp × target``, clipped to
its bounds, with ``fairProp`` chosen so that the allocations add up to the server's
concurrency limit."""

from __future__ import annotations

from dataclasses import dataclass

MIN_TARGET = 0.001
EPSILON = 0.0000001


@dataclass
class Item:
    """One priority level's ``allocProblemItem``."""

    target: float
    lower: float
    upper: float


def compute_allocation(required: int, items: list[Item]) -> tuple[list[float], float]:
    """``computeConcurrencyAllocation``: ``(allocations, fairProp)``; ValueError when the
    bounds make ``required`` impossible."""
    if required < 0:
        raise ValueError("negative sums are not supported")
    low_sum = high_sum = target_sum = 0.0
    relative = []
    for index, item in enumerate(items):
        if item.lower < 0:
            raise ValueError(f"lower bound {index} is {item.lower} but negative lower bounds "
                             "are not allowed")
        if item.target < item.lower:
            raise ValueError(f"target {index} is {item.target}, which is below its lower "
                             f"bound of {item.lower}")
        if item.upper < item.lower:
            raise ValueError(f"upper bound {index} is {item.upper} but should not be less "
                             f"than the lower bound {item.lower}")
        target = max(item.target, MIN_TARGET)
        low_sum += item.lower
        high_sum += item.upper
        target_sum += target
        relative.append((target, item.lower / target, item.upper / target))
    if relative and max(r[1] for r in relative) > 1:
        raise ValueError("a lower bound is above its target")
    if low_sum - required > EPSILON:
        raise ValueError(f"lower bounds sum to {low_sum}, which is higher than the required "
                         f"sum of {required}")
    if required - high_sum > EPSILON:
        raise ValueError(f"upper bounds sum to {high_sum}, which is lower than the required "
                         f"sum of {required}")
    if required == 0:
        return [0.0] * len(items), 0.0
    if low_sum - required > -EPSILON:
        return [item.lower for item in items], min(r[1] for r in relative)
    if required - high_sum > -EPSILON:
        return [item.upper for item in items], max(r[2] for r in relative)
    fair = required / target_sum
    if max(r[1] for r in relative) <= fair <= min(r[2] for r in relative):
        return [r[0] * fair for r in relative], fair
    # Some bounds matter: raise fairProp past the bounds in ascending order until the
    # allocations add up.
    bounds = sorted([(r[1], i, True) for i, r in enumerate(relative)]
                    + [(r[2], i, False) for i, r in enumerate(relative)], key=lambda b: b[0])
    sum_so_far = low_sum
    fair = min(r[1] for r in relative)
    sensitive_target = delta_target = 0.0
    sensitive = delta = 0
    next_index = 0
    while sum_so_far < required:
        while True:
            sensitive_target += delta_target
            sensitive += delta
            if next_index >= len(bounds):
                raise ValueError("impossible: ran out of bounds to consider")
            bound, item, lower = bounds[next_index]
            delta = 1 if lower else -1
            delta_target = delta * relative[item][0]
            next_index += 1
            if bound > fair:
                break
        if sensitive == 0:
            fair = bound
            continue
        proposed = fair + (required - sum_so_far) / sensitive_target
        if proposed <= bound:
            fair = proposed
            break
        sum_so_far += (bound - fair) * sensitive_target
        fair = bound
    return [max(item.lower, min(item.upper, fair * r[0]))
            for item, r in zip(items, relative)], fair
