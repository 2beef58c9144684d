"""CronJob schedules as robfig/cron v3's ParseStandard reads them, Go's ParseDuration and
LoadLocation (kapiserver_plugins.batch.cron)."""

import pytest

from kapiserver_plugins.batch import cron


@pytest.mark.parametrize("schedule", [
    "* * * * *", "*/5 * * * *", "0 0 * * MON-FRI", "0 9-17/2 1,15 jan-Dec sun",
    "? ? ? ? ?", "0 0 1 1 0", "59 23 31 12 6", "5/15 * * * *", ",,, * * * *",
    "@hourly", "@daily", "@midnight", "@weekly", "@monthly", "@yearly", "@annually",
    "@every 1h30m", "@every 1.5s", "@every -5m", "TZ=UTC * * * * *",
    "CRON_TZ=America/New_York 0 1 * * *", "TZ=Europe/Paris @daily",
    "\t*  *\n* * *  ",
])
def test_schedules_upstream_accepts(schedule):
    cron.parse_standard(schedule)


@pytest.mark.parametrize("schedule, message", [
    ("every day", "expected exactly 5 fields, found 2: [every day]"),
    ("* * * *", "expected exactly 5 fields, found 4: [* * * *]"),
    ("0 * * * * *", "expected exactly 5 fields, found 6: [0 * * * * *]"),
    ("60 * * * *", "end of range (60) above maximum (59): 60"),
    ("* 24 * * *", "end of range (24) above maximum (23): 24"),
    ("* * 0 * *", "beginning of range (0) below minimum (1): 0"),
    ("* * * 13 *", "end of range (13) above maximum (12): 13"),
    ("* * * * 7", "end of range (7) above maximum (6): 7"),
    ("5-1 * * * *", "beginning of range (5) beyond end of range (1): 5-1"),
    ("*/0 * * * *", "step of range should be a positive number: */0"),
    ("1-2-3 * * * *", "too many hyphens: 1-2-3"),
    ("1/2/3 * * * *", "too many slashes: 1/2/3"),
    ("x * * * *", 'failed to parse int from x: strconv.Atoi: parsing "x": invalid syntax'),
    ("-1 * * * *", 'failed to parse int from : strconv.Atoi: parsing "": invalid syntax'),
    ("* * * JANX *",
     'failed to parse int from JANX: strconv.Atoi: parsing "JANX": invalid syntax'),
    ("*/-2 * * * *", "negative number (-2) not allowed: -2"),
    ("99999999999999999999 * * * *", 'failed to parse int from 99999999999999999999: '
                                      'strconv.Atoi: parsing "99999999999999999999": value out '
                                      'of range'),
    ("@weekly2", "unrecognized descriptor: @weekly2"),
    ("@every", "unrecognized descriptor: @every"),
    ("@every 5", 'failed to parse duration @every 5: time: missing unit in duration "5"'),
    ("@every 5q", 'failed to parse duration @every 5q: time: unknown unit "q" in duration "5q"'),
    ("@every .h", 'failed to parse duration @every .h: time: invalid duration ".h"'),
    ("TZ=Nowhere/City * * * * *",
     "provided bad location Nowhere/City: unknown time zone Nowhere/City"),
    ("CRON_TZ=../x * * * * *", "provided bad location ../x: time: invalid location name"),
    ("TZ=UTC", "expected exactly 5 fields, found 0: []"),
    ("", "empty spec string"),
])
def test_schedules_upstream_refuses(schedule, message):
    with pytest.raises(cron.ScheduleError) as refused:
        cron.parse_standard(schedule)
    assert str(refused.value) == message


@pytest.mark.parametrize("text, nanos", [
    ("0", 0), ("1h30m", 5_400_000_000_000), ("1.5s", 1_500_000_000), ("-2m", -120_000_000_000),
    ("+3ms", 3_000_000), ("1\u00b5s", 1_000), ("1\u03bcs", 1_000), ("2us", 2_000), ("7ns", 7),
    (".5h", 1_800_000_000_000), ("1h1h", 7_200_000_000_000),
])
def test_parse_duration(text, nanos):
    assert cron.parse_duration(text) == nanos


@pytest.mark.parametrize("text, message", [
    ("", 'time: invalid duration ""'), ("-", 'time: invalid duration "-"'),
    ("1", 'time: missing unit in duration "1"'), ("1d", 'time: unknown unit "d" in duration "1d"'),
    ("h", 'time: invalid duration "h"'), ("1.h", None),
    ("9999999999999999999h", 'time: invalid duration "9999999999999999999h"'),
    ("1\u00e9", 'time: unknown unit "\\xc3\\xa9" in duration "1\\xc3\\xa9"'),
])
def test_parse_duration_errors(text, message):
    if message is None:  # "1." is 1 with an empty fraction: valid
        assert cron.parse_duration(text) == 3_600_000_000_000
        return
    with pytest.raises(ValueError) as refused:
        cron.parse_duration(text)
    assert str(refused.value) == message


@pytest.mark.parametrize("name", ["", "UTC", "Local", "Europe/Berlin", "America/New_York",
                                  "Etc/GMT+5", "EST5EDT"])
def test_load_location_knows_the_tz_database(name):
    cron.load_location(name)


@pytest.mark.parametrize("name, message", [
    ("Mars/Olympus", "unknown time zone Mars/Olympus"), ("local", "unknown time zone local"),
    ("/etc/passwd", "time: invalid location name"), ("a/../b", "time: invalid location name"),
])
def test_load_location_refuses(name, message):
    with pytest.raises(cron.LocationError) as refused:
        cron.load_location(name)
    assert str(refused.value) == message
