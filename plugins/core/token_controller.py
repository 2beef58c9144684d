"""The legacy service-account token controller (kube-controller-manager's
``serviceaccount-token``, ``pkg/controller/serviceaccount/tokens_controller.go``), run by
the elected worker.

A Secret of type ``kubernetes.io/service-account-token`` names a service account in its
``kubernetes.io/service-account.name`` annotation. The controller fills in what it lacks:
``token`` (a long-lived JWT of issuer ``kubernetes/serviceaccount``, signed with the
service-account key, which authenticates as that service account while the Secret holds
it), ``ca.crt`` (the data dir's CA) and ``namespace``, and records the service account's
uid in ``kubernetes.io/service-account.uid``. A token Secret whose service account does
not exist (or has another uid than the one recorded) is deleted, as are a deleted service
account's token Secrets; a deleted token Secret is dropped from its service account's
``secrets``. Since 1.24 upstream makes no such Secret by itself, and neither does this one.
Upstream's tracking and clean-up of unused legacy tokens are not done here.
"""

from __future__ import annotations

import base64
import json
import logging

from kapiserver import errors
from kapiserver.controllers.workqueue import QueueController
from kapiserver.registry.store import Preconditions
from kapiserver.storage.interface import DELETED

from .secrets import SERVICE_ACCOUNT_NAME_KEY, SERVICE_ACCOUNT_TOKEN
from .serviceaccount_controllers import MANAGER, root_ca_file

log = logging.getLogger(__name__)

SERVICE_ACCOUNT_UID_KEY = "kubernetes.io/service-account.uid"
TOKEN_KEY, CA_KEY, NAMESPACE_KEY = "token", "ca.crt", "namespace"
_TYPE_BYTES = SERVICE_ACCOUNT_TOKEN.encode()


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def _decoded(value) -> bytes:
    try:
        return base64.b64decode(value or "", validate=True)
    except (ValueError, TypeError):
        return b""


def _annotations(obj: dict) -> dict:
    annotations = (obj.get("metadata") or {}).get("annotations")
    return annotations if isinstance(annotations, dict) else {}


def is_token_for(secret: dict, account_name: str, account_uid: str) -> bool:
    """``serviceaccount.IsServiceAccountToken``: a token Secret naming that account (and,
    when it records one, its uid)."""
    if secret.get("type") != SERVICE_ACCOUNT_TOKEN:
        return False
    annotations = _annotations(secret)
    uid = annotations.get(SERVICE_ACCOUNT_UID_KEY) or ""
    return annotations.get(SERVICE_ACCOUNT_NAME_KEY) == account_name and \
        (not uid or uid == account_uid)


class TokensController(QueueController):
    """Fill in legacy token Secrets; delete those of missing service accounts."""

    name = "serviceaccount-token"

    def __init__(self, server):
        self.secrets = server.registries[("", "secrets")]
        self.accounts = server.registries[("", "serviceaccounts")]
        super().__init__(server)
        self.manage = self.secrets.field_manager(MANAGER)
        self.manage_accounts = self.accounts.field_manager(MANAGER)
        self.ca_file = root_ca_file(server.config)

    def routes(self) -> dict:
        secrets_prefix = self.secrets.spec.key_prefix()
        accounts_prefix = self.accounts.spec.key_prefix()

        def secret_keys(event):
            value = event.value if event.value is not None else event.prev_value
            # Cheap test first: the feed hands over every Secret written anywhere.
            if not value or _TYPE_BYTES not in value:
                return []
            namespace, name = event.key[len(secrets_prefix):].split("/", 1)
            if event.type != DELETED:
                return [("secret", namespace, name)]
            annotations = _annotations(json.loads(value))
            return [("deleted-secret", namespace, name,
                     annotations.get(SERVICE_ACCOUNT_NAME_KEY) or "",
                     annotations.get(SERVICE_ACCOUNT_UID_KEY) or "")]

        def account_keys(event):
            if event.type != DELETED or not event.prev_value:
                return []
            namespace, name = event.key[len(accounts_prefix):].split("/", 1)
            uid = (json.loads(event.prev_value).get("metadata") or {}).get("uid") or ""
            return [("deleted-account", namespace, name, uid)]

        return {secrets_prefix: secret_keys, accounts_prefix: account_keys}

    def all_keys(self):
        return [("secret", s["metadata"]["namespace"], s["metadata"]["name"])
                for s in self.secrets.list("")["items"] if s.get("type") == SERVICE_ACCOUNT_TOKEN]

    def process(self, key) -> None:
        kind, namespace, name, *rest = key
        if kind == "secret":
            self._sync_secret(namespace, name)
        elif kind == "deleted-secret":
            self._forget_secret(namespace, name, *rest)
        elif kind == "deleted-account":
            self._delete_tokens(namespace, name, *rest)

    # -- the work --------------------------------------------------------------------------

    def _account(self, namespace: str, name: str, uid: str = "") -> dict | None:
        """The service account, ``None`` when missing or not the one of ``uid``."""
        if not name:
            return None
        try:
            account = self.accounts.get(namespace, name)
        except errors.NotFound:
            return None
        if uid and (account.get("metadata") or {}).get("uid") != uid:
            return None
        return account

    def _sync_secret(self, namespace: str, name: str) -> None:
        try:
            secret = self.secrets.get(namespace, name)
        except errors.NotFound:
            return
        if secret.get("type") != SERVICE_ACCOUNT_TOKEN:
            return
        annotations = _annotations(secret)
        account = self._account(namespace, annotations.get(SERVICE_ACCOUNT_NAME_KEY) or "",
                                annotations.get(SERVICE_ACCOUNT_UID_KEY) or "")
        if account is None:
            self._delete(secret)
            return
        root_ca = self._root_ca()
        if not self._needs(secret, root_ca):
            return

        def mutate(live: dict) -> dict:
            if live.get("type") != SERVICE_ACCOUNT_TOKEN or not self._needs(live, root_ca):
                raise _Unchanged
            data = live.get("data") if isinstance(live.get("data"), dict) else {}
            live["data"] = data
            if root_ca and _decoded(data.get(CA_KEY)) != root_ca:
                data[CA_KEY] = _b64(root_ca)
            if not _decoded(data.get(NAMESPACE_KEY)):
                data[NAMESPACE_KEY] = _b64(namespace.encode())
            if not _decoded(data.get(TOKEN_KEY)):
                data[TOKEN_KEY] = _b64(self._token(account, live).encode())
            meta = live.setdefault("metadata", {})
            meta["annotations"] = {**_annotations(live),
                                   SERVICE_ACCOUNT_NAME_KEY: account["metadata"]["name"],
                                   SERVICE_ACCOUNT_UID_KEY: account["metadata"]["uid"]}
            return live

        try:
            self.secrets.guaranteed_update(namespace, name, mutate, manage=self.manage,
                                           preconditions=Preconditions(
                                               uid=secret["metadata"]["uid"]))
            log.info("populated service account token %s/%s", namespace, name)
        except (_Unchanged, errors.NotFound):
            pass
        except errors.Conflict:
            pass  # replaced by another Secret of that name: its own event follows

    def _needs(self, secret: dict, root_ca: bytes) -> bool:
        """``secretUpdateNeeded``: a CA other than the cluster's, no namespace, no token."""
        data = secret.get("data") if isinstance(secret.get("data"), dict) else {}
        return bool(root_ca) and _decoded(data.get(CA_KEY)) != root_ca or \
            not _decoded(data.get(NAMESPACE_KEY)) or not _decoded(data.get(TOKEN_KEY))

    def _token(self, account: dict, secret: dict) -> str:
        # Imported here: cryptography loads only when a token is to be signed.
        from kapiserver.authentication.serviceaccount import ServiceAccountTokens

        return ServiceAccountTokens.for_server(self.server).issue_legacy(account, secret)

    def _root_ca(self) -> bytes:
        try:
            with open(self.ca_file, "rb") as f:
                return f.read()
        except FileNotFoundError:
            return b""

    def _delete(self, secret: dict) -> None:
        meta = secret["metadata"]
        try:
            self.secrets.delete(meta["namespace"], meta["name"], Preconditions(uid=meta["uid"]))
            log.info("deleted service account token %s/%s: its service account %r is gone",
                     meta["namespace"], meta["name"],
                     _annotations(secret).get(SERVICE_ACCOUNT_NAME_KEY))
        except (errors.NotFound, errors.Conflict):
            pass

    def _delete_tokens(self, namespace: str, name: str, uid: str) -> None:
        """A service account went: its token Secrets go too, unless it is back already
        (the same uid)."""
        if self._account(namespace, name, uid) is not None:
            return
        for secret in self.secrets.list(namespace)["items"]:
            if is_token_for(secret, name, uid):
                self._delete(secret)

    def _forget_secret(self, namespace: str, name: str, account_name: str,
                       account_uid: str) -> None:
        """A token Secret went: its service account no longer lists it."""
        account = self._account(namespace, account_name, account_uid)
        if account is None or not any((ref or {}).get("name") == name
                                      for ref in account.get("secrets") or []):
            return

        def mutate(live: dict) -> dict:
            refs = live.get("secrets") or []
            kept = [ref for ref in refs if (ref or {}).get("name") != name]
            if len(kept) == len(refs):
                raise _Unchanged
            live["secrets"] = kept
            return live

        try:
            self.accounts.guaranteed_update(namespace, account_name, mutate,
                                            manage=self.manage_accounts,
                                            preconditions=Preconditions(
                                                uid=account["metadata"]["uid"]))
        except (_Unchanged, errors.NotFound, errors.Conflict):
            pass


class _Unchanged(Exception):
    """Nothing to write."""
