"""The Prometheus text format (version 0.0.4) as client_golang writes it.

Families sorted by name, samples by their labels, label names sorted with ``le`` last,
floats as Go formats them. Written here rather than with prometheus_client's
``generate_latest`` because that one appends ``_total`` to every counter's name, and two of
upstream's counters (``authentication_attempts``, ``authenticated_user_requests``) have
none.
"""

from __future__ import annotations

from ..apimachinery.field_errors import go_float

#: What kube-apiserver answers a plain ``Accept: */*`` scrape with.
CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8; escaping=values"

_SUFFIX_ORDER = {"_bucket": 0, "_sum": 1, "_count": 2}


def _escape_label(value: str) -> str:
    return value.replace("\\", "\\\\").replace("\n", "\\n").replace('"', '\\"')


def _escape_help(text: str) -> str:
    return text.replace("\\", "\\\\").replace("\n", "\\n")


def _sample_key(family_name: str, sample):
    name, labels = sample.name, sample.labels
    without_le = tuple(sorted((k, v) for k, v in labels.items() if k != "le"))
    suffix = name[len(family_name):]
    le = labels.get("le")
    return (without_le, _SUFFIX_ORDER.get(suffix, 0),
            float(le) if le is not None else 0.0)


def _labels_text(labels: dict) -> str:
    if not labels:
        return ""
    names = sorted(k for k in labels if k != "le")
    text = ",".join(f'{k}="{_escape_label(str(labels[k]))}"' for k in names)
    if "le" in labels:  # a bucket bound, written as Go writes a float64 (1, 1e+06)
        bound = f'le="{go_float(float(labels["le"]))}"'
        text = f"{text},{bound}" if text else bound
    return "{" + text + "}"


def render(metrics) -> bytes:
    """The text of ``metrics`` (prometheus_client ``Metric`` objects); families without
    samples are left out, as client_golang leaves out a vector nothing was recorded in."""
    lines = []
    for metric in sorted(metrics, key=lambda m: m.name):
        if not metric.samples:
            continue
        kind = "untyped" if metric.type == "unknown" else metric.type
        lines.append(f"# HELP {metric.name} {_escape_help(metric.documentation)}\n")
        lines.append(f"# TYPE {metric.name} {kind}\n")
        for sample in sorted(metric.samples, key=lambda s: _sample_key(metric.name, s)):
            lines.append(f"{sample.name}{_labels_text(sample.labels)} "
                         f"{go_float(float(sample.value))}\n")
    return "".join(lines).encode()
