"""Delegated authentication: what an extension server learns from its main server.

Upstream's ``DelegatingAuthenticationOptions``: with ``--authentication-kubeconfig``, the
client CA and the front proxy's request-header settings that are not given locally
(``--client-ca-file``, ``--requestheader-client-ca-file``) are read from the main
server's ``kube-system/extension-apiserver-authentication`` ConfigMap, unless
``--authentication-skip-lookup``. A failed lookup stops the start, unless
``--authentication-tolerate-lookup-failure`` (the server then believes no front proxy).

The lookup runs once per start, before the workers exist (the TLS handshake must trust
the CAs it finds); what it found is kept under ``<data-dir>/pki/`` for the workers. A
change of the ConfigMap is seen at the next start (upstream watches it).
"""

from __future__ import annotations

import json
import logging
import os
import shutil

from kapiserver.errors import ConfigError

from .requestheader import RequestHeaderSettings

log = logging.getLogger(__name__)

NAMESPACE, NAME = "kube-system", "extension-apiserver-authentication"
PATH = f"/api/v1/namespaces/{NAMESPACE}/configmaps/{NAME}"
CLIENT_CA = "client-ca.crt"
REQUESTHEADER_CA = "requestheader-client-ca.crt"
REQUESTHEADER = "requestheader.json"


def directory(config) -> str:
    return os.path.join(config.data_dir, "pki", NAME)


def _wanted(config) -> tuple[bool, bool]:
    """Whether the client CA and the request-header settings are to be looked up."""
    if not getattr(config, "authentication_kubeconfig", "") or \
            getattr(config, "authentication_skip_lookup", False):
        return False, False
    return (not getattr(config, "client_ca_file", ""),
            not getattr(config, "requestheader_client_ca_file", ""))


def fetch(config) -> dict | None:
    """The ConfigMap's data through ``--authentication-kubeconfig`` (``None``: there is
    none); raise ``WebhookError`` when the main server cannot tell."""
    from kapiserver.webhookclient import WebhookClient, WebhookError

    client = WebhookClient.from_kubeconfig(
        config.authentication_kubeconfig, os.path.join(config.data_dir, "webhooks"),
        "authentication-kubeconfig").for_path(PATH)
    try:
        configmap = client.get()
    except WebhookError as err:
        if err.status_code == 404:
            return None
        raise
    return configmap.get("data") or {}


def prepare(config) -> list[str]:
    """Look the ConfigMap up and keep what it says; return the CA files it gave.

    Called once per start, before the workers (``kapiserver_client_ca_files``).
    """
    from kapiserver.webhookclient import WebhookError

    target = directory(config)
    shutil.rmtree(target, ignore_errors=True)
    client_ca, requestheader = _wanted(config)
    if not (client_ca or requestheader):
        return []
    try:
        data = fetch(config)
        if data is None:
            log.warning("configmap %s/%s not found on the main server: no client CA and no "
                        "front proxy are trusted from it", NAMESPACE, NAME)
            return []
        return _keep(config, data, target, client_ca, requestheader)
    except (WebhookError, ValueError) as err:
        if getattr(config, "authentication_tolerate_lookup_failure", False):
            log.warning("error looking up in-cluster authentication configuration: %s", err)
            log.warning("continuing without authentication configuration; this may treat "
                        "all requests as anonymous")
            shutil.rmtree(target, ignore_errors=True)
            return []
        raise ConfigError(f"--authentication-kubeconfig: unable to load configmap based "
                          f"authentication configuration ({NAMESPACE}/{NAME}): {err}") from None


def _keep(config, data: dict, target: str, client_ca: bool, requestheader: bool) -> list[str]:
    from marshmallow import ValidationError

    from kapiserver.options.types import load_pem_certificates

    os.makedirs(target, mode=0o700, exist_ok=True)
    written = []
    for wanted, key, name in ((client_ca, "client-ca-file", CLIENT_CA),
                              (requestheader, "requestheader-client-ca-file", REQUESTHEADER_CA)):
        if not wanted or not data.get(key):
            continue
        path = os.path.join(target, name)
        with open(path, "w") as f:
            f.write(data[key])
        try:
            load_pem_certificates(path)
        except ValidationError as err:
            raise ValueError(f"{key}: {err.messages[0]}") from None
        written.append(path)
    if requestheader and data.get("requestheader-client-ca-file"):
        settings = RequestHeaderSettings(
            os.path.join(target, REQUESTHEADER_CA),
            *(_string_list(data, key) for key in (
                "requestheader-allowed-names", "requestheader-username-headers",
                "requestheader-group-headers", "requestheader-extra-headers-prefix")))
        with open(os.path.join(target, REQUESTHEADER), "w") as f:
            f.write(settings.to_json())
    return written


def _string_list(data: dict, key: str) -> tuple[str, ...]:
    """A ConfigMap value holding a JSON list of strings (absent: empty)."""
    if not data.get(key):
        return ()
    value = json.loads(data[key])
    if value is None:
        return ()
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ValueError(f"{key}: not a JSON list of strings")
    return tuple(value)


def client_ca_file(config) -> str:
    """The main server's client CA found at start, or ``""``."""
    if not any(_wanted(config)):
        return ""
    path = os.path.join(directory(config), CLIENT_CA)
    return path if os.path.exists(path) else ""


def requestheader_settings(config) -> RequestHeaderSettings | None:
    """The main server's request-header settings found at start, or ``None``."""
    if not _wanted(config)[1]:
        return None
    try:
        with open(os.path.join(directory(config), REQUESTHEADER)) as f:
            return RequestHeaderSettings.from_json(f.read())
    except FileNotFoundError:
        return None
