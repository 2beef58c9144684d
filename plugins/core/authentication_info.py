"""``kube-system/extension-apiserver-authentication``: whom extension servers should trust.

Upstream's cluster-authentication-trust controller (post-start hook
``start-cluster-authentication-info-controller``): the ConfigMap holds the CA of client
certificates (``client-ca-file``: the data dir's CA and ``--client-ca-file``) and, when
``--requestheader-client-ca-file`` is set, the front proxy's CA and settings, each list a
JSON array. What the ConfigMap already holds is kept and combined with this server's (so
that servers sharing a store do not undo each other), certificates and names once each.

Written at start by every worker (they agree), then kept by the elected worker's
``cluster-authentication-trust`` controller, as upstream's keeps it: a ConfigMap edited or
deleted is mended at once, and checked again every minute. Expired CA certificates are not
dropped from the combination (that takes parsing certificates, which workers avoid).
"""

from __future__ import annotations

import json
import os
import textwrap
import time

from kapiserver import errors
from kapiserver.controllers import Controller

NAMESPACE, NAME = "kube-system", "extension-apiserver-authentication"
MANAGER = "kube-apiserver"
_BEGIN, _END = "-----BEGIN CERTIFICATE-----", "-----END CERTIFICATE-----"
#: upstream's controller re-checks the ConfigMap this often (seconds), besides on changes.
RESYNC = 60.0
#: The request-header lists, in the order upstream writes them.
_LISTS = ("requestheader-username-headers", "requestheader-group-headers",
          "requestheader-extra-headers-prefix", "requestheader-allowed-names")


def certificates(pem: str) -> list[str]:
    """The certificates of a PEM bundle, each as its base64 body without whitespace."""
    return ["".join(chunk.split(_END)[0].split()) for chunk in pem.split(_BEGIN)[1:]]


def bundle(bodies) -> str:
    """PEM text of certificate bodies (64-column lines, as Go's ``pem.Encode``)."""
    return "".join(f"{_BEGIN}\n" + "\n".join(textwrap.wrap(body, 64)) + f"\n{_END}\n"
                   for body in bodies)


def _read(paths) -> str:
    text = ""
    for path in paths:
        if path:
            with open(path) as f:
                text += f.read()
    return text


def required_data(config) -> dict:
    """What this server says (``ClusterAuthenticationInfo``), as ConfigMap data."""
    data = {"client-ca-file": _read([os.path.join(config.data_dir, "pki", "ca.crt"),
                                     config.client_ca_file])}
    requestheader_ca = config.get("requestheader_client_ca_file")
    if requestheader_ca:
        data["requestheader-client-ca-file"] = _read([requestheader_ca])
        for key in _LISTS:
            data[key] = json.dumps(list(config.get(key.replace("-", "_")) or []),
                                   separators=(",", ":"))
    return data


def combine(existing: dict, required: dict) -> dict:
    """The ConfigMap data holding both (``combinedClusterAuthenticationInfo``).

    Raises ``ValueError`` when a list in ``existing`` is not a JSON list of strings.
    """
    data = {}
    for key in ("client-ca-file", "requestheader-client-ca-file"):
        bodies = []
        for source in (existing, required):
            for body in certificates(source.get(key) or ""):
                if body not in bodies:
                    bodies.append(body)
        if bodies:
            data[key] = bundle(bodies)
    if "requestheader-client-ca-file" in data:
        for key in _LISTS:
            values = []
            for source in (existing, required):
                listed = json.loads(source[key]) if source.get(key) else []
                if not isinstance(listed, list) or not all(isinstance(v, str) for v in listed):
                    raise ValueError(f"{key}: not a JSON list of strings")
                values += [v for v in listed if v not in values]
            data[key] = json.dumps(values, separators=(",", ":"))
    return data


def publish_authentication_info(server, attempts: int = 50) -> None:
    """Create or update the ConfigMap (post-start hook; every worker runs it)."""
    configmaps = server.registries[("", "configmaps")]
    manage = configmaps.field_manager(MANAGER)
    required = required_data(server.config)
    _ensure_namespace(server)

    def mutate(obj: dict) -> dict:
        obj["data"] = _combined(obj.get("data") or {}, required)
        return obj

    for attempt in range(attempts):
        try:
            current = configmaps.get(NAMESPACE, NAME)
        except errors.NotFound:
            current = None
        try:
            if current is None:
                configmaps.create({"apiVersion": "v1", "kind": "ConfigMap",
                                   "metadata": {"name": NAME, "namespace": NAMESPACE},
                                   "data": _combined({}, required)}, NAMESPACE, manage=manage)
            elif _combined(current.get("data") or {}, required) != current.get("data"):
                configmaps.guaranteed_update(NAMESPACE, NAME, mutate, manage=manage)
            return
        except (errors.AlreadyExists, errors.NotFound):
            # Another worker created it (or someone deleted it) meanwhile: look again.
            if attempt == attempts - 1:
                raise
            time.sleep(0.02)


def _combined(existing: dict, required: dict) -> dict:
    try:
        return combine(existing, required)
    except ValueError:
        return combine({}, required)  # unreadable lists: upstream fails forever; start afresh


def _ensure_namespace(server) -> None:
    # Upstream's createNamespaceIfNeeded: the system-namespaces hook may not have run yet.
    namespaces = server.registries[("", "namespaces")]
    try:
        namespaces.get("", NAMESPACE)
    except errors.NotFound:
        try:
            namespaces.create({"apiVersion": "v1", "kind": "Namespace",
                               "metadata": {"name": NAMESPACE}},
                              manage=namespaces.field_manager(MANAGER))
        except errors.AlreadyExists:
            pass


class AuthenticationTrustController(Controller):
    """Keep the ConfigMap holding what this server says (upstream's
    ``ClusterAuthenticationTrustController``): mend it when it changes, re-check it every
    ``RESYNC`` seconds."""

    name = "cluster-authentication-trust"
    interval = 1.0

    def __init__(self, server):
        self.server = server
        self.key = server.registries[("", "configmaps")].spec.key(NAMESPACE, NAME)
        self.watcher = None
        self.next_check = 0.0

    def sync(self) -> None:
        cache = self.server.watch_cache
        if self.watcher is None or self.watcher.closed:
            # Events pile up while another worker leads; a watcher that overflowed is
            # closed, and starting over means checking now.
            self.watcher = cache.watch(self.key, cache.revision)
            self.next_check = 0.0
        changed = bool(self.watcher.get(0))
        if changed or time.monotonic() >= self.next_check:
            publish_authentication_info(self.server)
            self.next_check = time.monotonic() + RESYNC
