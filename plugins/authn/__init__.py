"""Built-in authenticators: x509 client certificates, static token file, service-account
tokens, the token webhook, anonymous."""

from marshmallow import ValidationError, fields

from kapiserver.plugin_manager import hookimpl
from kapiserver.options.types import (CommaList, Duration, Path, pem_private_key,
                                      readable_file)

from .anonymous import AnonymousAuthenticator
from .tokenfile import TokenFileAuthenticator, validate_token_file


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
                "how long the token webhook's answers are cached (e.g. 2m, 30s)")


@hookimpl
def kapiserver_authenticators(config):
    authenticators = {
        # Always on: the data dir's CA signs admin.kubeconfig's certificate.
        "x509": _x509,
    }
    # Always on: the server always has a signing key (generated when not given).
    authenticators["serviceaccount"] = _serviceaccount
    if config.token_auth_file:
        authenticators["tokenfile"] = (
            lambda server: TokenFileAuthenticator.from_file(server.config.token_auth_file))
    if config.authentication_token_webhook_config_file:
        authenticators["webhook"] = _webhook
    if config.anonymous_auth:
        authenticators["anonymous"] = lambda server: AnonymousAuthenticator()
    return authenticators
