"""Unit tests of the token file authenticator (upstream tokenfile.NewCSV and bearertoken)."""

import logging

import pytest
from marshmallow import ValidationError

from kapiserver.authentication import AuthenticationError, AuthenticationRequest, UserInfo
from kapiserver_plugins.authn.tokenfile import (TokenFileAuthenticator, bearer_token,
                                                parse_token_file, validate_token_file)


def write(tmp_path, text, name="tokens.csv"):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return str(path)


def test_parse_columns_and_groups(tmp_path):
    path = write(tmp_path, 'tok1,alice,uid-a,"devs,qa"\n'
                           "\n"
                           "tok2,bob,uid-b\n"
                           'tok3,carol,uid-c,"system:masters",ignored-extra\n'
                           "tok4,dave,uid-d,single\n")
    tokens = parse_token_file(path)
    assert tokens == {
        "tok1": UserInfo("alice", "uid-a", ("devs", "qa")),
        "tok2": UserInfo("bob", "uid-b", ()),
        "tok3": UserInfo("carol", "uid-c", ("system:masters",)),
        "tok4": UserInfo("dave", "uid-d", ("single",)),
    }


def test_parse_crlf_and_bom(tmp_path):
    path = tmp_path / "t.csv"
    path.write_bytes(b"\xef\xbb\xbftok,alice,uid\r\ntok2,bob,uid2\r\n")
    assert parse_token_file(str(path)) == {"tok": UserInfo("alice", "uid"),
                                           "tok2": UserInfo("bob", "uid2")}


def test_parse_empty_file(tmp_path):
    assert parse_token_file(write(tmp_path, "")) == {}


def test_fewer_than_three_columns_upstream_wording(tmp_path):
    path = write(tmp_path, "tok1,alice,uid\ntok2,bob\n")
    with pytest.raises(ValueError) as excinfo:
        parse_token_file(path)
    assert str(excinfo.value) == (f"token file '{path}' must have at least 3 columns "
                                  "(token, user name, user uid), found 2")


def test_column_error_quotes_path_like_go_for_any_path(tmp_path):
    # Upstream: fmt.Errorf("token file '%s' must have at least 3 columns ...", path): the
    # path goes between single quotes verbatim. repr() switches to double quotes when the
    # path holds a single quote (and doubles backslashes).
    path = write(tmp_path, "only-one\n", name="it's.csv")
    with pytest.raises(ValueError) as excinfo:
        parse_token_file(path)
    assert str(excinfo.value) == (f"token file '{path}' must have at least 3 columns "
                                  "(token, user name, user uid), found 1")


def test_empty_token_skipped_with_warning(tmp_path, caplog):
    path = write(tmp_path, ",nobody,uid0\ntok,alice,uid\n")
    with caplog.at_level(logging.WARNING, logger="kapiserver_plugins.authn.tokenfile"):
        assert parse_token_file(path) == {"tok": UserInfo("alice", "uid")}
    assert "empty token" in caplog.text and "record number 1" in caplog.text


def test_duplicate_token_last_wins_with_warning(tmp_path, caplog):
    path = write(tmp_path, "tok,alice,uid-a\ntok,bob,uid-b\n")
    with caplog.at_level(logging.WARNING, logger="kapiserver_plugins.authn.tokenfile"):
        assert parse_token_file(path) == {"tok": UserInfo("bob", "uid-b")}
    assert "duplicate token" in caplog.text and "record number 2" in caplog.text


def test_validate_token_file_empty_path_is_ok():
    assert validate_token_file("") is None


def test_validate_token_file_good(tmp_path):
    assert validate_token_file(write(tmp_path, "tok,alice,uid\n")) is None


def test_validate_token_file_missing(tmp_path):
    missing = str(tmp_path / "missing.csv")
    with pytest.raises(ValidationError) as excinfo:
        validate_token_file(missing)
    assert excinfo.value.messages == [f"{missing}: no such file"]


def test_validate_token_file_bad(tmp_path):
    path = write(tmp_path, "tok,alice\n")
    with pytest.raises(ValidationError) as excinfo:
        validate_token_file(path)
    assert excinfo.value.messages == [
        f"token file '{path}' must have at least 3 columns (token, user name, user uid), "
        "found 2"]


def test_validate_token_file_not_utf8(tmp_path):
    path = tmp_path / "latin1.csv"
    path.write_bytes(b"tok,\xe9l\xe8ve,uid\n")
    with pytest.raises(ValidationError):
        validate_token_file(str(path))


def test_validate_token_file_directory(tmp_path):
    with pytest.raises(ValidationError) as excinfo:
        validate_token_file(str(tmp_path))
    assert excinfo.value.messages == [f"{tmp_path}: not a regular file"]


# -- the authenticator -------------------------------------------------------------------

@pytest.fixture
def authenticator():
    return TokenFileAuthenticator({"good": UserInfo("alice", "uid-a", ("devs",))})


def req(value=None):
    return AuthenticationRequest(headers={} if value is None else {"Authorization": value})


def test_no_header_is_no_credentials(authenticator):
    assert authenticator.authenticate(req()) is None
    assert authenticator.authenticate(req("")) is None
    assert authenticator.authenticate(req("   ")) is None


@pytest.mark.parametrize("value", ["Basic x", "Basic Z29vZA==", "Bearer", "Bearer ",
                                   "Bearer  good", "good", "Token good"])
def test_non_bearer_or_empty_is_no_credentials(authenticator, value):
    assert authenticator.authenticate(req(value)) is None


@pytest.mark.parametrize("value", ["Bearer good", "bearer good", "BEARER good",
                                   "  Bearer good  ", "Bearer good extra"])
def test_good_token(authenticator, value):
    assert authenticator.authenticate(req(value)) == UserInfo("alice", "uid-a", ("devs",))


def test_bad_token_raises(authenticator):
    with pytest.raises(AuthenticationError, match="invalid bearer token"):
        authenticator.authenticate(req("Bearer bad"))


def test_from_file(tmp_path):
    auth = TokenFileAuthenticator.from_file(write(tmp_path, 'tok,bob,uid-b,"a,b"\n'))
    assert auth.name == "tokenfile"
    assert auth.authenticate(req("Bearer tok")) == UserInfo("bob", "uid-b", ("a", "b"))


def test_bearer_token_helper():
    assert bearer_token({"Authorization": "Bearer abc"}) == "abc"
    assert bearer_token({"Authorization": "Bearer abc def"}) == "abc"
    assert bearer_token({}) is None
    assert bearer_token({"Authorization": "Negotiate abc"}) is None
