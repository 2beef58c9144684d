"""metav1.Time and MicroTime: Go's time.Parse messages and UTC output."""

import datetime
import random

import pytest

from kapiserver.runtime.gotime import (RFC3339, TimeParseError, format_utc, normalize,
                                       normalize_times, parse)


@pytest.mark.parametrize("value,micro,written", [
    ("2026-11-25T04:04:08.955864+00:00", False, "2026-11-25T04:04:08Z"),
    ("2026-11-25T04:04:08.955864+00:00", True, "2026-11-25T04:04:08.955864Z"),
    ("2026-11-25T05:04:08+01:00", False, "2026-11-25T04:04:08Z"),
    ("2023-12-31T23:30:00-01:00", False, "2024-01-01T00:30:00Z"),
    ("2024-01-01T1:02:03Z", False, "2024-01-01T01:02:03Z"),  # Go's hour takes one digit
    ("0000-01-01T00:00:00Z", False, "0000-01-01T00:00:00Z"),
])
def test_written_in_utc(value, micro, written):
    assert normalize(value, micro) == written


@pytest.mark.parametrize("value,micro,message", [
    ("yesterday", False, 'parsing time "yesterday" as "2006-01-02T15:04:05Z07:00": cannot '
                         'parse "yesterday" as "2006"'),
    ("", False, 'parsing time "" as "2006-01-02T15:04:05Z07:00": cannot parse "" as "2006"'),
    ("2024-01-01 00:00:00Z", False, 'parsing time "2024-01-01 00:00:00Z" as '
                                    '"2006-01-02T15:04:05Z07:00": cannot parse " 00:00:00Z" as '
                                    '"T"'),
    ("2024-02-30T00:00:00Z", False, 'parsing time "2024-02-30T00:00:00Z": day out of range'),
    ("2024-13-01T00:00:00Z", False, 'parsing time "2024-13-01T00:00:00Z": month out of range'),
    ("2024-01-01T24:00:00Z", False, 'parsing time "2024-01-01T24:00:00Z": hour out of range'),
    ("2024-01-01T00:00:00Zjunk", False, 'parsing time "2024-01-01T00:00:00Zjunk": extra text: '
                                        '"junk"'),
    # MicroTime wants exactly six fractional digits
    ("2021-07-19T13:05:26Z", True, 'parsing time "2021-07-19T13:05:26Z" as '
                                   '"2006-01-02T15:04:05.000000Z07:00": cannot parse "Z" as '
                                   '".000000"'),
    ("2024-01-01T00:00:00.5Z", True, 'parsing time "2024-01-01T00:00:00.5Z" as '
                                     '"2006-01-02T15:04:05.000000Z07:00": cannot parse ".5Z" as '
                                     '".000000"'),
])
def test_go_parse_errors(value, micro, message):
    with pytest.raises(TimeParseError) as err:
        normalize(value, micro)
    assert str(err.value) == message


def test_round_trips_any_second_of_years_1_to_9999():
    rng = random.Random(7)
    start = datetime.datetime(1, 1, 1, tzinfo=datetime.timezone.utc)
    for _ in range(2000):
        moment = start + datetime.timedelta(seconds=rng.randrange(315537897600))
        text = (f"{moment.year:04d}-{moment.month:02d}-{moment.day:02d}T{moment.hour:02d}:"
                f"{moment.minute:02d}:{moment.second:02d}Z")
        seconds, nanos = parse(text, RFC3339)
        assert seconds == int(moment.timestamp())
        assert format_utc(seconds, nanos, False) == text


def test_objects_are_walked_with_their_kinds_schema():
    lease = {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
             "metadata": {"name": "l", "creationTimestamp": None,
                          "managedFields": [{"time": "2026-01-01T01:00:00+01:00"}]},
             "spec": {"renewTime": "2026-01-01T00:00:00.000001+00:00", "holderIdentity": "x"}}
    normalize_times(lease, "coordination.k8s.io/v1", "Lease")
    assert lease["metadata"] == {"name": "l", "creationTimestamp": None,
                                 "managedFields": [{"time": "2026-01-01T00:00:00Z"}]}
    assert lease["spec"]["renewTime"] == "2026-01-01T00:00:00.000001Z"
    with pytest.raises(TimeParseError) as err:
        normalize_times({"spec": {"acquireTime": 5}}, "coordination.k8s.io/v1", "Lease")
    assert str(err.value) == ("json: cannot unmarshal number into Go struct field "
                              "LeaseSpec.spec.acquireTime of type string")
    untouched = {"spec": {"when": "soon"}}
    normalize_times(untouched, "example.com/v1", "Widget")  # a kind the tables do not know
    assert untouched == {"spec": {"when": "soon"}}
