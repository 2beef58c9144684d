"""The service-account controller and the root CA publisher (kube-controller-manager's
``serviceaccount`` and ``root-ca-cert-publisher`` controllers), run by the elected worker.

Both follow namespaces (and what they keep in them) through the watch cache and act on
the namespaces a change touches, within the feed's tick of the change:

* ``serviceaccount`` makes the ``default`` ServiceAccount in every active namespace, and
  makes it again when it is deleted (never in a terminating namespace: that one is going).
* ``root-ca-cert-publisher`` keeps the ``kube-root-ca.crt`` ConfigMap in every namespace:
  ``ca.crt`` is the CA of the data dir's PKI (the one ``admin.kubeconfig`` trusts), with
  upstream's ``kubernetes.io/description`` annotation; one edited or deleted is mended at
  once. The ServiceAccount admission plugin projects it into every pod's token volume.

Writes go straight to the registries under the manager name ``kube-controller-manager``,
as the upstream controllers' would appear.
"""

from __future__ import annotations

import logging
import os

from kapiserver import errors
from kapiserver.controllers.workqueue import QueueController
from kapiserver.storage.interface import DELETED

log = logging.getLogger(__name__)

MANAGER = "kube-controller-manager"
#: The service accounts every namespace gets (upstream's
#: ``DefaultServiceAccountsControllerOptions``).
SERVICE_ACCOUNTS_TO_ENSURE = ("default",)
ROOT_CA_CONFIGMAP = "kube-root-ca.crt"
DESCRIPTION_ANNOTATION = "kubernetes.io/description"
DESCRIPTION = ("Contains a CA bundle that can be used to verify the kube-apiserver when using "
               "internal endpoints such as the internal service IP or kubernetes.default.svc. "
               "No other usage is guaranteed across distributions of Kubernetes clusters.")
ACTIVE, TERMINATING = "Active", "Terminating"


def _split(key: str, prefix: str) -> tuple[str, str]:
    """``(namespace, name)`` of a namespaced object's storage key under ``prefix``."""
    namespace, _, name = key[len(prefix):].partition("/")
    return namespace, name


class _NamespacedController(QueueController):
    """What both controllers share: one key per namespace, every namespace on resync."""

    def __init__(self, server):
        self.namespaces = server.registries[("", "namespaces")]
        super().__init__(server)

    def _namespace_route(self):
        prefix = self.namespaces.spec.key_prefix()
        return prefix, lambda event: [event.key[len(prefix):]]

    def all_keys(self):
        return [ns["metadata"]["name"] for ns in self.namespaces.list("")["items"]]

    def _phase(self, namespace: str) -> str | None:
        """The namespace's phase, ``None`` when it does not exist."""
        try:
            obj = self.namespaces.get("", namespace)
        except errors.NotFound:
            return None
        return (obj.get("status") or {}).get("phase") or ""


class ServiceAccountsController(_NamespacedController):
    """``ServiceAccountsController``: the ``default`` ServiceAccount in every namespace."""

    name = "serviceaccount"

    def __init__(self, server):
        self.accounts = server.registries[("", "serviceaccounts")]
        super().__init__(server)
        self.manage = self.accounts.field_manager(MANAGER)

    def routes(self) -> dict:
        namespaces, namespace_keys = self._namespace_route()
        prefix = self.accounts.spec.key_prefix()

        def account_keys(event):
            # Only a deletion leaves a namespace without what it must have.
            namespace, name = _split(event.key, prefix)
            return [namespace] if event.type == DELETED and \
                name in SERVICE_ACCOUNTS_TO_ENSURE else []

        return {namespaces: namespace_keys, prefix: account_keys}

    def process(self, namespace: str) -> None:
        if self._phase(namespace) != ACTIVE:
            return  # gone, or going: nothing is made there
        for name in SERVICE_ACCOUNTS_TO_ENSURE:
            try:
                self.accounts.get(namespace, name)
                continue
            except errors.NotFound:
                pass
            try:
                self.accounts.create({"apiVersion": "v1", "kind": "ServiceAccount",
                                      "metadata": {"name": name}}, namespace,
                                     manage=self.manage)
                log.info("created service account %s/%s", namespace, name)
            except errors.AlreadyExists:
                pass


def root_ca_file(config) -> str:
    """The data dir's CA certificate (``pki.PKI.ca_cert_file``; read without loading
    ``cryptography``, as workers do)."""
    return os.path.join(config.data_dir, "pki", "ca.crt")


class RootCACertPublisher(_NamespacedController):
    """``root-ca-cert-publisher``: the ``kube-root-ca.crt`` ConfigMap in every namespace."""

    name = "root-ca-cert-publisher"

    def __init__(self, server):
        self.configmaps = server.registries[("", "configmaps")]
        super().__init__(server)
        self.manage = self.configmaps.field_manager(MANAGER)
        self.ca_file = root_ca_file(server.config)
        self._ca: tuple | None = None

    def routes(self) -> dict:
        namespaces, namespace_keys = self._namespace_route()
        prefix = self.configmaps.spec.key_prefix()

        def configmap_keys(event):
            namespace, name = _split(event.key, prefix)
            return [namespace] if name == ROOT_CA_CONFIGMAP else []

        return {namespaces: namespace_keys, prefix: configmap_keys}

    def root_ca(self) -> str:
        """The CA bundle, read again when the file changes (a CA replaced in the data dir
        is published)."""
        stat = os.stat(self.ca_file)
        stamp = (stat.st_mtime_ns, stat.st_size, stat.st_ino)
        if self._ca is None or self._ca[0] != stamp:
            with open(self.ca_file) as f:
                self._ca = (stamp, f.read())
        return self._ca[1]

    def process(self, namespace: str) -> None:
        data = {"ca.crt": self.root_ca()}
        try:
            current = self.configmaps.get(namespace, ROOT_CA_CONFIGMAP)
        except errors.NotFound:
            current = None
        if current is None:
            if self._phase(namespace) in (None, TERMINATING):
                return  # upstream's create is refused there, and not retried
            try:
                self.configmaps.create({
                    "apiVersion": "v1", "kind": "ConfigMap",
                    "metadata": {"name": ROOT_CA_CONFIGMAP,
                                 "annotations": {DESCRIPTION_ANNOTATION: DESCRIPTION}},
                    "data": data}, namespace, manage=self.manage)
            except errors.AlreadyExists:
                self.queue.add(namespace)  # made meanwhile: look at it again
            return
        if _published(current, data):
            return

        def mutate(configmap: dict) -> dict:
            if _published(configmap, data):
                raise _Unchanged
            configmap["data"] = dict(data)
            meta = configmap.setdefault("metadata", {})
            annotations = meta.get("annotations")
            meta["annotations"] = dict(annotations) if isinstance(annotations, dict) else {}
            meta["annotations"][DESCRIPTION_ANNOTATION] = DESCRIPTION
            return configmap

        try:
            self.configmaps.guaranteed_update(namespace, ROOT_CA_CONFIGMAP, mutate,
                                              manage=self.manage)
        except (_Unchanged, errors.NotFound):
            pass  # a deletion brings its own event


def _published(configmap: dict, data: dict) -> bool:
    """Upstream's check: the data exactly, and some description annotation."""
    annotations = (configmap.get("metadata") or {}).get("annotations") or {}
    return (configmap.get("data") or {}) == data and bool(annotations.get(DESCRIPTION_ANNOTATION))


class _Unchanged(Exception):
    """Nothing to write."""
