"""A client for authentication and authorization webhooks, configured by a kubeconfig.

As upstream's ``webhook.GenericWebhook``: the kubeconfig's current context (else its
first cluster and user) names the server URL, the CA that verifies it (a file, inline
data, or the system's), and the client certificate or bearer token to present. Each call
POSTs one JSON object (or GETs one) and returns the decoded answer, retrying with
upstream's backoff (0.5 s, ×1.5, 5 attempts) on connection failures, 429 and 5xx answers.

The same kubeconfig may name an API server rather than a webhook (an extension server's
``--authentication-kubeconfig``): ``for_path`` addresses one of its paths, as client-go
does with a ``rest.Config``.

Connections are kept alive between calls. ``dial`` makes a client connect elsewhere than
its URL's host while TLS still verifies that host (a Service's ``NAME.NAMESPACE.svc``,
reached at an address of its endpoints). Failures are worded as Go's HTTP client and
client-go word them (``webhookerrors``).
"""

from __future__ import annotations

import base64
import hashlib
import logging
import os
import time
import urllib.parse

import yaml

from .errors import ConfigError

log = logging.getLogger(__name__)

TIMEOUT = 30
RETRY_DELAY, RETRY_FACTOR, RETRY_STEPS = 0.5, 1.5, 5


class WebhookError(Exception):
    """The webhook could not be reached or did not answer with a usable object.

    ``status_code`` is the HTTP status of a refusal (0 when there was no answer).
    """

    def __init__(self, message: str, status_code: int = 0):
        super().__init__(message)
        self.status_code = status_code


def _pick(entries, name):
    entries = entries or []
    for entry in entries:
        if entry.get("name") == name:
            return entry
    return entries[0] if entries else None


class WebhookClient:
    """POST JSON to the server a kubeconfig describes; ``post(obj) -> dict``."""

    def __init__(self, url: str, verify, cert=None, token: str = "", retry_steps=RETRY_STEPS,
                 retry_delay=RETRY_DELAY, dial=None, timeout: float = TIMEOUT):
        """``dial()``, when given, returns the ``(host, port)`` to connect to for a call
        (``LookupError`` when there is none); ``timeout`` bounds connecting and reading."""
        self.url = url
        self.verify = verify
        self.cert = cert
        self.token = token
        self.retry_steps = retry_steps
        self.retry_delay = retry_delay
        self.dial = dial
        self.timeout = timeout
        self._session = None

    @classmethod
    def from_kubeconfig(cls, path: str, material_dir: str, option: str) -> "WebhookClient":
        """Read ``path``; inline certificates are written under ``material_dir``
        (requests reads certificates from files). ``option`` names errors."""
        cluster, user = read_kubeconfig(path, option)
        url = cluster["server"]
        base = os.path.dirname(os.path.abspath(path))

        def material(file_key, data_key, suffix):
            if user_or_cluster.get(data_key):
                return write_material(material_dir,
                                      base64.b64decode(user_or_cluster[data_key]), suffix)
            value = user_or_cluster.get(file_key)
            return os.path.join(base, value) if value else None

        user_or_cluster = cluster
        verify = material("certificate-authority", "certificate-authority-data", "-ca.crt")
        if verify is None:
            verify = not cluster.get("insecure-skip-tls-verify", False)
        user_or_cluster = user
        cert = material("client-certificate", "client-certificate-data", "-client.crt")
        key = material("client-key", "client-key-data", "-client.key")
        token = user.get("token") or ""
        if not token and user.get("tokenFile"):
            with open(os.path.join(base, user["tokenFile"])) as f:
                token = f.read().strip()
        return cls(url, verify, (cert, key) if cert and key else None, token)

    def for_path(self, path: str) -> "WebhookClient":
        """The same server, credentials, retries and kept-alive connections, at ``path``
        below its URL (the kubeconfig names an API server, ``path`` one of its resources)."""
        import requests

        client = WebhookClient(self.url.rstrip("/") + path, self.verify, self.cert, self.token,
                               self.retry_steps, self.retry_delay, self.dial, self.timeout)
        if self._session is None:
            self._session = requests.Session()
        client._session = self._session
        return client

    def post(self, obj: dict) -> dict:
        """POST ``obj`` as JSON; return the decoded answer."""
        return self._call("POST", obj)

    def get(self) -> dict:
        """GET the URL; return the decoded answer (a refusal raises ``WebhookError`` with
        its ``status_code``, e.g. 404)."""
        return self._call("GET", None)

    def close(self) -> None:
        """Close the connections kept alive."""
        if self._session is not None:
            self._session.close()
            self._session = None

    def _call(self, method: str, obj) -> dict:
        import requests

        from .webhookerrors import refusal, request_error

        headers = {"Accept": "application/json"}
        if obj is not None:
            headers["Content-Type"] = "application/json"
        if self.token:
            headers["Authorization"] = f"Bearer {self.token}"
        if self._session is None:
            self._session = requests.Session()
        target = urllib.parse.urlsplit(self.url)
        address = (target.hostname or "", target.port or 443)
        delay, problem = self.retry_delay, None
        for attempt in range(self.retry_steps):
            if attempt:
                time.sleep(delay)
                delay *= RETRY_FACTOR
            url = self.url
            try:
                if self.dial is not None:
                    address = self.dial()
                    url = self._dial_url(target, address, headers)
                # verify= per call: REQUESTS_CA_BUNDLE would override a session's.
                response = self._session.request(method, url, json=obj, headers=headers,
                                                 verify=self.verify, cert=self.cert,
                                                 timeout=self.timeout)
            except (requests.RequestException, LookupError) as err:
                problem = request_error(err, method, self.url, address, target.hostname or "",
                                        self.verify)
                continue
            if response.status_code == 429 or response.status_code >= 500:
                problem = refusal(response.status_code, response.content,
                                  response.headers.get("Content-Type", ""))
                continue
            if not 200 <= response.status_code < 300:
                raise WebhookError(refusal(response.status_code, response.content,
                                           response.headers.get("Content-Type", "")),
                                   response.status_code)
            try:
                answer = response.json()
            except ValueError as err:
                raise WebhookError(f"invalid JSON from the webhook: {err}") from None
            if not isinstance(answer, dict):
                raise WebhookError("the webhook answered with no object")
            return answer
        raise WebhookError(problem or "no answer")

    def _dial_url(self, target, address: tuple[str, int], headers: dict) -> str:
        """The URL that connects to ``address`` with TLS verifying ``target``'s host (an
        adapter per address, kept by the session with its connections)."""
        host, port = address
        netloc = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
        prefix = f"{target.scheme}://{netloc}/"
        if prefix not in self._session.adapters:
            self._session.mount(prefix, _server_name_adapter(target.hostname or ""))
        headers["Host"] = target.netloc
        return urllib.parse.urlunsplit((target.scheme, netloc, target.path, target.query, ""))


def _server_name_adapter(server_name: str):
    """A requests adapter whose connections' TLS server name (SNI and the name verified)
    is ``server_name``."""
    from requests.adapters import HTTPAdapter

    class ServerNameAdapter(HTTPAdapter):
        def init_poolmanager(self, *args, **kwargs):
            kwargs["server_hostname"] = server_name
            super().init_poolmanager(*args, **kwargs)

    return ServerNameAdapter()


def write_material(material_dir: str, data: bytes, suffix: str) -> str:
    """A file under ``material_dir`` holding ``data`` (named by its digest, written
    atomically, readable only by this user), for libraries that read files."""
    os.makedirs(material_dir, mode=0o700, exist_ok=True)
    target = os.path.join(material_dir, hashlib.sha256(data).hexdigest()[:16] + suffix)
    if not os.path.exists(target):
        fd = os.open(target + f".{os.getpid()}", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(target + f".{os.getpid()}", target)
    return target


def read_kubeconfig(path: str, option: str) -> tuple[dict, dict]:
    """The ``(cluster, user)`` entries a kubeconfig's current context names (else its
    first ones); raise ``ConfigError`` naming ``--option`` when there is no server URL."""
    try:
        with open(path) as f:
            config = yaml.safe_load(f) or {}
        context = (_pick(config.get("contexts"), config.get("current-context")) or
                   {}).get("context") or {}
        cluster = (_pick(config.get("clusters"), context.get("cluster")) or {})["cluster"]
        user = (_pick(config.get("users"), context.get("user")) or {}).get("user") or {}
        if not isinstance(cluster["server"], str) or not isinstance(user, dict):
            raise TypeError("the server URL must be a string")
    except (OSError, yaml.YAMLError, KeyError, TypeError, AttributeError) as err:
        raise ConfigError(f"--{option}: {path}: not a usable kubeconfig: {err}") from None
    return cluster, user


class TTLCache:
    """A bounded cache whose entries expire; per worker, owned by one authenticator or
    authorizer (so by one server)."""

    def __init__(self, max_size: int = 4096, clock=time.monotonic):
        from collections import OrderedDict

        self.entries = OrderedDict()
        self.max_size = max_size
        self.clock = clock

    def get(self, key):
        entry = self.entries.get(key)
        if entry is None:
            return None
        if entry[0] <= self.clock():
            del self.entries[key]
            return None
        return entry

    def put(self, key, value, ttl: float) -> None:
        if ttl <= 0:
            return
        self.entries[key] = (self.clock() + ttl, value)
        self.entries.move_to_end(key)
        while len(self.entries) > self.max_size:
            self.entries.popitem(last=False)
