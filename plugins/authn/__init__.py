"""Built-in authenticators: x509 client certificates, static token file, anonymous."""

from marshmallow import fields

from kapiserver.plugin_manager import hookimpl
from kapiserver.options.types import Path

from .anonymous import AnonymousAuthenticator
from .tokenfile import TokenFileAuthenticator, validate_token_file


def _x509(server):
    # Imported in the worker that builds it: the gunicorn master, which also runs this
    # plugin's hooks, then never loads pyOpenSSL and cryptography (~13 MiB).
    from .x509 import X509Authenticator

    return X509Authenticator.from_config(server.config)


@hookimpl
def kapiserver_add_options(options):
    options.add("token-auth-file", Path(load_default="", validate=validate_token_file),
                "static bearer tokens, CSV: token,user,uid,\"group1,group2\"")
    options.add("anonymous-auth", fields.Boolean(load_default=True),
                "serve requests without credentials as system:anonymous")


@hookimpl
def kapiserver_authenticators(config):
    authenticators = {
        # Always on: the data dir's CA signs admin.kubeconfig's certificate.
        "x509": _x509,
    }
    if config.token_auth_file:
        authenticators["tokenfile"] = (
            lambda server: TokenFileAuthenticator.from_file(server.config.token_auth_file))
    if config.anonymous_auth:
        authenticators["anonymous"] = lambda server: AnonymousAuthenticator()
    return authenticators
