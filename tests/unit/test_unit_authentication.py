"""Unit tests of kapiserver.authentication.union (upstream union + group adder + FailOnError)."""

import logging

import pytest

from kapiserver.authentication import (ALL_AUTHENTICATED, ALL_UNAUTHENTICATED, ANONYMOUS,
                                       AuthenticationError, AuthenticationRequest,
                                       Authenticator, UserInfo)
from kapiserver.authentication import union
from kapiserver_plugins.authn.anonymous import AnonymousAuthenticator


class Fake(Authenticator):
    """Returns ``result`` (a UserInfo or None) or raises it (an exception); counts calls."""

    def __init__(self, name, result=None, anonymous=False):
        self.name = name
        self.result = result
        self.anonymous = anonymous
        self.calls = 0

    def authenticate(self, request):
        self.calls += 1
        if isinstance(self.result, Exception):
            raise self.result
        return self.result


REQ = AuthenticationRequest(headers={})


def test_first_success_wins_and_later_ones_are_not_consulted():
    a = Fake("a", None)
    b = Fake("b", UserInfo("bob", "uid-b", ("devs",)))
    c = Fake("c", UserInfo("carol"))
    user = union.UnionAuthenticator([a, b, c], []).authenticate(REQ)
    assert user.name == "bob" and user.uid == "uid-b"
    assert user.groups == ("devs", ALL_AUTHENTICATED)
    assert (a.calls, b.calls, c.calls) == (1, 1, 0)


def test_error_then_success_returns_success():
    a = Fake("a", AuthenticationError("bad token"))
    b = Fake("b", UserInfo("bob"))
    user = union.UnionAuthenticator([a, b], []).authenticate(REQ)
    assert user.name == "bob"
    assert user.groups == (ALL_AUTHENTICATED,)


def test_errors_aggregated_when_nobody_succeeds():
    a = Fake("a", AuthenticationError("bad token"))
    b = Fake("b", None)
    c = Fake("c", AuthenticationError("bad cert"))
    with pytest.raises(AuthenticationError) as excinfo:
        union.UnionAuthenticator([a, b, c], []).authenticate(REQ)
    message = str(excinfo.value)
    assert "bad token" in message and "bad cert" in message
    assert "[a]" in message and "[c]" in message
    assert message.index("bad token") < message.index("bad cert")
    assert (a.calls, b.calls, c.calls) == (1, 1, 1)


def test_no_credentials_and_no_anonymous_is_none():
    assert union.UnionAuthenticator([Fake("a"), Fake("b")], []).authenticate(REQ) is None
    assert union.UnionAuthenticator([], []).authenticate(REQ) is None


def test_anonymous_consulted_only_without_credentials():
    anon = AnonymousAuthenticator()
    user = union.UnionAuthenticator([Fake("a", None)], [anon]).authenticate(REQ)
    assert user.name == ANONYMOUS
    # anonymous is not passed through the authenticated-group adder
    assert user.groups == (ALL_UNAUTHENTICATED,)
    assert ALL_AUTHENTICATED not in user.groups


def test_anonymous_not_consulted_when_someone_succeeds():
    anon = Fake("anonymous", UserInfo(ANONYMOUS, "", (ALL_UNAUTHENTICATED,)), anonymous=True)
    user = union.UnionAuthenticator([Fake("a", UserInfo("alice"))], [anon]).authenticate(REQ)
    assert user.name == "alice"
    assert anon.calls == 0


def test_bad_credentials_never_downgraded_to_anonymous():
    # union.NewFailOnError(authenticator, anonymous): an error is returned, not anonymous.
    anon = Fake("anonymous", UserInfo(ANONYMOUS, "", (ALL_UNAUTHENTICATED,)), anonymous=True)
    bad = Fake("tokenfile", AuthenticationError("invalid bearer token"))
    with pytest.raises(AuthenticationError, match="invalid bearer token"):
        union.UnionAuthenticator([bad], [anon]).authenticate(REQ)
    assert anon.calls == 0


@pytest.mark.parametrize("groups,expected", [
    ((), (ALL_AUTHENTICATED,)),
    (("a", "b"), ("a", "b", ALL_AUTHENTICATED)),
    (("a", ALL_AUTHENTICATED), ("a", ALL_AUTHENTICATED)),
    ((ALL_AUTHENTICATED, "a"), (ALL_AUTHENTICATED, "a")),
    ((ALL_UNAUTHENTICATED,), (ALL_UNAUTHENTICATED,)),
    (("x", ALL_UNAUTHENTICATED), ("x", ALL_UNAUTHENTICATED)),
])
def test_add_authenticated_group(groups, expected):
    user = UserInfo("alice", "uid", groups, {"k": ("v",)})
    result = union.add_authenticated_group(user)
    assert result.groups == expected
    assert (result.name, result.uid, dict(result.extra)) == ("alice", "uid", {"k": ("v",)})
    assert user.groups == groups  # the original is not mutated (frozen)


def test_add_authenticated_group_skips_anonymous_user():
    user = UserInfo(ANONYMOUS, "", ("custom",))
    assert union.add_authenticated_group(user).groups == ("custom",)


def test_union_result_is_not_duplicated_for_already_authenticated():
    a = Fake("a", UserInfo("alice", "", ("g", ALL_AUTHENTICATED)))
    user = union.UnionAuthenticator([a], []).authenticate(REQ)
    assert user.groups.count(ALL_AUTHENTICATED) == 1


def test_order_default():
    names = ["webhook", "zeta", "tokenfile", "alpha", "x509", "requestheader", "oidc"]
    assert union.order(names) == ["requestheader", "x509", "tokenfile", "oidc", "webhook",
                                  "alpha", "zeta"]


def test_order_matches_default_order_constant():
    assert union.DEFAULT_ORDER == ("requestheader", "x509", "tokenfile", "serviceaccount",
                                   "bootstrap", "oidc", "webhook")
    assert union.order(list(reversed(union.DEFAULT_ORDER))) == list(union.DEFAULT_ORDER)


def test_order_configured_overrides_default():
    names = {"x509", "tokenfile", "oidc", "alpha"}
    assert union.order(names, ["oidc", "tokenfile"]) == ["oidc", "tokenfile", "alpha", "x509"]


def test_order_configured_names_not_present_are_ignored():
    assert union.order(["x509"], ["tokenfile", "x509"]) == ["x509"]
    assert union.order([], None) == []


def test_order_empty_configured_means_default():
    assert union.order(["tokenfile", "x509"], []) == ["x509", "tokenfile"]


def test_build_separates_anonymous_and_orders(caplog):
    x509 = Fake("x509")
    token = Fake("tokenfile")
    extra = Fake("custom")
    anon = Fake("anonymous", anonymous=True)
    with caplog.at_level(logging.INFO, logger="kapiserver.authentication.union"):
        built = union.build({"anonymous": anon, "custom": extra, "tokenfile": token,
                             "x509": x509})
    assert built.authenticators == [x509, token, extra]
    assert built.anonymous == [anon]
    assert "x509, tokenfile, custom; then anonymous" in caplog.text


def test_build_with_configured_order():
    x509, token = Fake("x509"), Fake("tokenfile")
    built = union.build({"x509": x509, "tokenfile": token}, ["tokenfile", "x509"])
    assert built.authenticators == [token, x509]
    assert built.anonymous == []


def test_userinfo_with_groups_keeps_identity():
    user = UserInfo("n", "u", ("a",), {"e": ("1",)})
    other = user.with_groups(["b", "c"])
    assert other == UserInfo("n", "u", ("b", "c"), {"e": ("1",)})
    assert isinstance(other.groups, tuple)


def test_base_authenticator_is_abstract():
    with pytest.raises(NotImplementedError):
        Authenticator().authenticate(REQ)
