"""Built-in authenticators: a front proxy's request headers, x509 client certificates,
static token file, service-account tokens, the token webhook (or, for an extension server,
TokenReview on the main server), anonymous."""

from marshmallow import ValidationError, fields

from kapiserver.errors import ConfigError
from kapiserver.plugin_manager import hookimpl
from kapiserver.options.types import (CommaList, Duration, Path, http_header_names,
                                      kubeconfig_file, pem_certificates, pem_private_key,
                                      readable_file)

from .anonymous import AnonymousAuthenticator
from .requestheader import (DEFAULT_EXTRA_PREFIXES, DEFAULT_GROUP_HEADERS,
                            DEFAULT_USERNAME_HEADERS)
from .tokenfile import TokenFileAuthenticator, validate_token_file

#: Upstream's ``DelegatingAuthenticationOptions.CacheTTL``: an extension server caches
#: the main server's TokenReview answers briefly.
DELEGATED_TOKEN_CACHE_TTL = 10.0


def _x509(server):
    # Imported in the worker that builds it: the gunicorn master, which also runs this
    # plugin's hooks, then never loads pyOpenSSL and cryptography (~13 MiB).
    from .x509 import X509Authenticator

    return X509Authenticator.from_config(server.config)


def _serviceaccount(server):
    # cryptography is imported with it, in the worker only (as for x509).
    from .serviceaccount import ServiceAccountAuthenticator

    return ServiceAccountAuthenticator.for_server(server)


def _webhook(server):
    # Imported in the worker: the webhook client and its TLS material.
    from .webhook import WebhookTokenAuthenticator

    return WebhookTokenAuthenticator.from_config(server.config)


def _requestheader(server):
    # pyOpenSSL loads with the first client certificate, in the worker.
    from . import delegated
    from .requestheader import RequestHeaderAuthenticator, RequestHeaderSettings

    config = server.config
    if config.requestheader_client_ca_file:
        return RequestHeaderAuthenticator(RequestHeaderSettings.from_options(config))
    settings = delegated.requestheader_settings(config)
    # None: the main server named no front proxy (or the lookup was tolerated to fail).
    return RequestHeaderAuthenticator(settings) if settings is not None else None


def _public_key_files(paths):
    for path in paths:
        readable_file(path)
        with open(path, "rb") as f:
            if b"-----BEGIN " not in f.read():
                raise ValidationError(f"{path}: no PEM public key, private key or "
                                      "certificate found")


@hookimpl
def kapiserver_add_options(options):
    options.add("token-auth-file", Path(load_default="", validate=validate_token_file),
                "static bearer tokens, CSV: token,user,uid,\"group1,group2\"")
    options.add("anonymous-auth", fields.Boolean(load_default=True),
                "serve requests without credentials as system:anonymous")
    options.add("service-account-signing-key-file",
                Path(load_default="", validate=pem_private_key),
                "private key (PEM, RSA or ECDSA) signing service-account tokens; generated "
                "as pki/sa.key in the data dir when unset")
    options.add("service-account-key-file",
                CommaList(Path(), load_default=list, validate=_public_key_files),
                "PEM files of public keys (or certificates, private keys) that verify "
                "service-account tokens, besides the signing key's")
    # kind's and kubeadm's issuer: what in-cluster clients expect.
    options.add("service-account-issuer",
                CommaList(fields.String(), load_default=lambda: [
                    "https://kubernetes.default.svc.cluster.local"]),
                "issuer of service-account tokens (iss); the first signs, every one is "
                "accepted")
    options.add("api-audiences", CommaList(fields.String(), load_default=list),
                "audiences of the API: service-account tokens must be meant for one of "
                "them (default: the first --service-account-issuer)")
    options.add("authentication-token-webhook-config-file",
                Path(load_default="", validate=readable_file),
                "kubeconfig of a remote service that authenticates bearer tokens "
                "(TokenReview v1)")
    options.add("authentication-token-webhook-cache-ttl", Duration(load_default=120.0),
                "how long the token webhook's answers are cached (e.g. 2m, 30s); 10s by "
                "default with --authentication-kubeconfig, as upstream's extension servers")
    options.add("requestheader-client-ca-file", Path(load_default="", validate=pem_certificates),
                "CA bundle verifying the client certificates of front proxies (the main "
                "server's aggregator) before the users in --requestheader-username-headers "
                "are believed")
    options.add("requestheader-allowed-names", CommaList(fields.String(), load_default=list),
                "common names of the front-proxy client certificates allowed to state users "
                "in headers; empty: any certificate --requestheader-client-ca-file verifies")
    options.add("requestheader-username-headers",
                CommaList(fields.String(), load_default=lambda: list(DEFAULT_USERNAME_HEADERS),
                          validate=http_header_names),
                "request headers to inspect for usernames, in order")
    options.add("requestheader-group-headers",
                CommaList(fields.String(), load_default=lambda: list(DEFAULT_GROUP_HEADERS),
                          validate=http_header_names),
                "request headers to inspect for groups")
    options.add("requestheader-extra-headers-prefix",
                CommaList(fields.String(), load_default=lambda: list(DEFAULT_EXTRA_PREFIXES),
                          validate=http_header_names),
                "request header prefixes to inspect for user extras")
    options.add("authentication-kubeconfig", Path(load_default="", validate=kubeconfig_file),
                "kubeconfig of the main (core) API server, allowed to create tokenreviews: "
                "bearer tokens are reviewed there, and its client CA and front-proxy settings "
                "are read from its kube-system/extension-apiserver-authentication ConfigMap")
    options.add("authentication-skip-lookup", fields.Boolean(load_default=False),
                "do not read missing client CA and front-proxy settings from the main "
                "server's ConfigMap (--authentication-kubeconfig)")
    options.add("authentication-tolerate-lookup-failure", fields.Boolean(load_default=False),
                "start even when the main server's ConfigMap cannot be read; no front proxy "
                "is then believed")


def token_webhook_cache_ttl(config) -> float:
    """``--authentication-token-webhook-cache-ttl``, whose default depends on the role."""
    if config.authentication_kubeconfig and \
            "authentication-token-webhook-cache-ttl" not in getattr(config, "given", ()):
        return DELEGATED_TOKEN_CACHE_TTL
    return config.authentication_token_webhook_cache_ttl


@hookimpl
def kapiserver_client_ca_files(config):
    from . import delegated

    files = [config.requestheader_client_ca_file] if config.requestheader_client_ca_file else []
    return files + delegated.prepare(config)


@hookimpl
def kapiserver_authenticators(config):
    if config.authentication_kubeconfig and config.authentication_token_webhook_config_file:
        raise ConfigError("--authentication-kubeconfig: reviews tokens on the main server; "
                          "--authentication-token-webhook-config-file names another token "
                          "webhook: set one of them")
    authenticators = {
        # Always on: the data dir's CA signs admin.kubeconfig's certificate.
        "x509": _x509,
    }
    if config.requestheader_client_ca_file or config.authentication_kubeconfig:
        authenticators["requestheader"] = _requestheader
    # Always on: the server always has a signing key (generated when not given).
    authenticators["serviceaccount"] = _serviceaccount
    if config.token_auth_file:
        authenticators["tokenfile"] = (
            lambda server: TokenFileAuthenticator.from_file(server.config.token_auth_file))
    if config.authentication_token_webhook_config_file or config.authentication_kubeconfig:
        authenticators["webhook"] = _webhook
    if config.anonymous_auth:
        authenticators["anonymous"] = lambda server: AnonymousAuthenticator()
    return authenticators
