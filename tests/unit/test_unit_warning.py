"""kapiserver.warning: warnings added deep in a request become its Warning headers."""

import threading

from flask import Response
from werkzeug.test import EnvironBuilder
from werkzeug.wrappers import Request

from kapiserver import warning
from kapiserver.server.filters import with_panic_recovery


def test_outside_a_request_a_warning_goes_nowhere():
    warning.add_warning("nobody listens")
    with warning.recording([]) as sink:
        pass
    assert sink == []


def test_each_text_is_sent_once():
    with warning.recording([]) as sink:
        warning.add_warning("spec.x: Invalid value")
        warning.add_warning("another")
        warning.add_warning("spec.x: Invalid value")
        warning.add_warning("")
    assert warning.header_texts(sink) == ["spec.x: Invalid value", "another"]


def test_past_4096_characters_texts_are_cut_then_dropped_as_upstream():
    short = [f"w{i:03d}: " + "x" * 995 for i in range(4)]  # 1000 characters each
    assert warning.header_texts(short) == short
    # The fifth passes the limit: every text is cut to 256 characters from then on...
    texts = short + ["w004: " + "y" * 995] + [f"w{i:03d}" for i in range(5, 20)]
    sent = warning.header_texts(texts)
    assert sent[:5] == [t[:256] for t in texts[:5]]
    # ...and once what was sent reaches 4096 characters, the rest are dropped.
    assert sent[5:] == [f"w{i:03d}" for i in range(5, 20)]
    long = [f"{i:03d}" + "z" * 500 for i in range(30)]
    assert warning.header_texts(long) == [t[:256] for t in long[:16]]


def test_recordings_nest_and_stay_private_to_their_thread():
    outer, seen = [], {}

    def other_request():
        warning.add_warning("from another thread")
        with warning.recording([]) as sink:
            warning.add_warning("mine")
        seen["other"] = sink

    with warning.recording(outer):
        with warning.recording([]) as inner:
            warning.add_warning("inner")
        thread = threading.Thread(target=other_request)
        thread.start()
        thread.join()
        warning.add_warning("outer")
    assert (outer, inner, seen["other"]) == (["outer"], ["inner"], ["mine"])


def test_the_outermost_filter_sends_them_as_warning_headers():
    def handler(ctx):
        warning.add_warning('spec.name: Invalid value: "string": must start with "v"')
        return Response("{}", 200, content_type="application/json")

    request = Request(EnvironBuilder(path="/apis").get_environ())
    response = with_panic_recovery(None, handler)(request)
    assert response.headers.getlist("Warning") == [
        '299 - "spec.name: Invalid value: \\"string\\": must start with \\"v\\""']
