"""Unit tests of kapiserver.server.healthz.serve against upstream's healthz text format."""

from werkzeug.datastructures import MultiDict

from kapiserver.server.healthz import HealthCheck, PostStartHook, log_check, ping, serve


def ok():
    return None


def failing():
    return "etcd is down"


def raising():
    raise RuntimeError("kaboom")


CHECKS = [HealthCheck("ping", ping), HealthCheck("log", ok), HealthCheck("etcd", ok)]


def body(resp):
    return resp.get_data(as_text=True)


def test_non_verbose_ok():
    resp = serve("readyz", CHECKS, "", MultiDict())
    assert resp.status_code == 200
    assert body(resp) == "ok"
    assert resp.headers["Content-Type"] == "text/plain; charset=utf-8"
    assert resp.headers["X-Content-Type-Options"] == "nosniff"


def test_verbose_ok():
    resp = serve("readyz", CHECKS, "", MultiDict([("verbose", "")]))
    assert resp.status_code == 200
    assert body(resp) == "[+]ping ok\n[+]log ok\n[+]etcd ok\nreadyz check passed\n"


def test_verbose_uses_kind():
    resp = serve("livez", CHECKS[:1], "", MultiDict([("verbose", "1")]))
    assert body(resp) == "[+]ping ok\nlivez check passed\n"


def test_exclude():
    args = MultiDict([("verbose", ""), ("exclude", "ping"), ("exclude", "etcd")])
    resp = serve("readyz", CHECKS, "", args)
    assert resp.status_code == 200
    assert body(resp) == ("[+]ping excluded: ok\n[+]log ok\n[+]etcd excluded: ok\n"
                          "readyz check passed\n")


def test_exclude_unknown_warns():
    args = MultiDict([("verbose", ""), ("exclude", "ping"), ("exclude", "nope")])
    resp = serve("readyz", CHECKS, "", args)
    assert resp.status_code == 200
    assert body(resp) == ("[+]ping excluded: ok\n[+]log ok\n[+]etcd ok\n"
                          'warn: some health checks cannot be excluded: no matches for "nope"\n'
                          "readyz check passed\n")


def test_exclude_several_unknown_sorted_and_quoted():
    args = MultiDict([("verbose", ""), ("exclude", "zz"), ("exclude", "a\"b")])
    resp = serve("healthz", CHECKS[:1], "", args)
    assert body(resp) == ("[+]ping ok\n"
                          'warn: some health checks cannot be excluded: no matches for '
                          '"a\\"b","zz"\n'
                          "healthz check passed\n")


def test_exclude_unknown_without_verbose_is_just_ok():
    resp = serve("readyz", CHECKS, "", MultiDict([("exclude", "nope")]))
    assert (resp.status_code, body(resp)) == (200, "ok")


def test_excluding_a_failing_check_passes():
    checks = CHECKS + [HealthCheck("x", failing)]
    resp = serve("readyz", checks, "", MultiDict([("exclude", "x")]))
    assert (resp.status_code, body(resp)) == (200, "ok")


def test_failing_check_is_always_verbose():
    checks = [HealthCheck("ping", ping), HealthCheck("x", failing), HealthCheck("y", raising)]
    resp = serve("readyz", checks, "", MultiDict())
    assert resp.status_code == 500
    assert body(resp) == ("[+]ping ok\n[-]x failed: reason withheld\n"
                          "[-]y failed: reason withheld\nreadyz check failed\n")
    assert "etcd is down" not in body(resp) and "kaboom" not in body(resp)
    assert resp.headers["Content-Type"] == "text/plain; charset=utf-8"
    assert resp.headers["X-Content-Type-Options"] == "nosniff"


def test_failing_check_with_exclude_warning():
    checks = [HealthCheck("x", failing)]
    resp = serve("healthz", checks, "", MultiDict([("exclude", "nope")]))
    assert resp.status_code == 500
    assert body(resp) == ("[-]x failed: reason withheld\n"
                          'warn: some health checks cannot be excluded: no matches for "nope"\n'
                          "healthz check failed\n")


def test_no_checks():
    assert body(serve("readyz", [], "", MultiDict())) == "ok"
    assert body(serve("readyz", [], "", MultiDict([("verbose", "")]))) == "readyz check passed\n"


def test_single_check_ok():
    resp = serve("readyz", CHECKS, "etcd", MultiDict())
    assert (resp.status_code, body(resp)) == (200, "ok")


def test_single_check_failing():
    resp = serve("readyz", CHECKS + [HealthCheck("x", failing)], "x", MultiDict())
    assert resp.status_code == 500
    assert body(resp) == "internal server error: etcd is down\n"


def test_single_check_raising():
    resp = serve("livez", [HealthCheck("y", raising)], "y", MultiDict())
    assert resp.status_code == 500
    assert body(resp) == "internal server error: kaboom\n"


def test_single_check_unknown():
    resp = serve("readyz", CHECKS, "nope", MultiDict())
    assert resp.status_code == 404
    assert body(resp) == "404 page not found\n"


def test_check_raising_without_message_uses_type_name():
    def bare():
        raise KeyError()

    # str(KeyError()) is "", so the type name is reported
    assert HealthCheck("k", bare).check() == "KeyError"


def test_ping_and_log_checks():
    assert ping() is None
    assert log_check() is None


def test_post_start_hook_lifecycle():
    seen = []
    hook = PostStartHook("start-informers", lambda server: seen.append(server))
    assert hook.check() == "not finished"
    hook.run("srv")
    assert seen == ["srv"]
    assert hook.check() is None


def test_post_start_hook_failure_stays_failed():
    def boom(server):
        raise ValueError("no storage")

    hook = PostStartHook("h", boom)
    hook.run(None)
    assert hook.check() == "ValueError: no storage"
    assert not hook.done.is_set()


def test_post_start_hook_as_readyz_check():
    hook = PostStartHook("h", lambda s: None)
    checks = [HealthCheck("ping", ping), HealthCheck("poststarthook/h", hook.check)]
    resp = serve("readyz", checks, "", MultiDict([("verbose", "")]))
    assert resp.status_code == 500
    assert body(resp) == ("[+]ping ok\n[-]poststarthook/h failed: reason withheld\n"
                          "readyz check failed\n")
    hook.run(None)
    resp = serve("readyz", checks, "", MultiDict([("verbose", "")]))
    assert body(resp) == "[+]ping ok\n[+]poststarthook/h ok\nreadyz check passed\n"
