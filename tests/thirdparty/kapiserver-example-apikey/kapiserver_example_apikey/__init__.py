"""An example third-party kapiserver plugin: authenticate ``X-API-Key`` headers.

Keys come from the file named by its own option ``--example-api-keys-file``: one
``KEY USER [GROUP,...]`` per line. A key that is not in the file is refused (401).
"""

from marshmallow import fields

from kapiserver.authentication import AuthenticationError, Authenticator, UserInfo
from kapiserver.plugin_manager import hookimpl


class APIKeyAuthenticator(Authenticator):
    name = "example-apikey"

    def __init__(self, path):
        self.keys = {}
        with open(path) as f:
            for line in f:
                parts = line.split()
                if len(parts) >= 2:
                    groups = tuple(parts[2].split(",")) if len(parts) > 2 else ()
                    self.keys[parts[0]] = UserInfo(parts[1], "", groups)

    def authenticate(self, request):
        key = request.headers.get("X-API-Key")
        if key is None:
            return None
        if key not in self.keys:
            raise AuthenticationError("unknown API key")
        return self.keys[key]


@hookimpl
def kapiserver_add_options(options):
    options.add("example-api-keys-file", fields.String(load_default=""),
                "file of API keys: KEY USER [GROUP,...] per line")


@hookimpl
def kapiserver_authenticators(config):
    if not config.example_api_keys_file:
        return {}
    return {"example-apikey":
            lambda server: APIKeyAuthenticator(server.config.example_api_keys_file)}
