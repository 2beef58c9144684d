"""OpenAPIBuilder: a server's OpenAPI documents, built from its installed API groups.

The documents are built on the first ``/openapi`` request (not at import, not in the
gunicorn master) and cached as encoded bytes; ``invalidate()`` drops them so the next
request rebuilds from whatever groups are installed then. Other servers' documents (the
aggregator's extension servers) are merged in with ``set_aggregated()``.
"""

from __future__ import annotations

import dataclasses
import functools
import gzip
import hashlib
import json
import logging
import threading
import time

from . import merge, schemas, v2, v3
from .routes import CRD_INFO, RouteTable

log = logging.getLogger(__name__)

def encode(document: dict, escape_html: bool = True) -> bytes:
    """``json.Marshal``: compact, HTML-escaped (unless ``escape_html`` is false), no
    trailing newline."""
    return schemas.go_json(document, escape_html).encode()


def content_hash(data: bytes) -> str:
    """kube-openapi's ``computeETag``: SHA-512, upper-case hex (the v3 ``hash`` and ETags)."""
    return hashlib.sha512(data).hexdigest().upper()


class Documents:
    """One build of every document: encoded bytes, their hashes, and when it was built.

    ``v3`` maps a document key (``api/v1``, ``apis/coordination.k8s.io/v1``, ``version``)
    to ``(bytes, hash)``; ``index`` is the ``/openapi/v3`` discovery document. ``v3_encoded``
    adds documents already encoded (another server's, as it served them).
    """

    def __init__(self, v2_document, v3_documents: dict[str, dict],
                 v3_encoded: dict[str, bytes] | None = None):
        self.built_at = time.time()
        #: The v2 document, or a function that renders it: clients that read only v3
        #: (kubectl's) never wait for the v2 one (half the work of a build).
        self._v2_document = v2_document
        self.v3 = {}
        for key, document in v3_documents.items():
            data = encode(document)
            self.v3[key] = (data, content_hash(data))
        for key, data in (v3_encoded or {}).items():
            self.v3[key] = (data, content_hash(data))
        self.index = encode({"paths": {
            key: {"serverRelativeURL": server_relative_url(key, self.v3[key][1])}
            for key in sorted(self.v3)}})

    @functools.cached_property
    def v2_json(self) -> bytes:
        """The v2 document, rendered on first use. kube-openapi writes it with its JSON v2
        encoder, which leaves <, > and & as they are; the v3 documents and the index go
        through json.Marshal."""
        document = self._v2_document
        self._v2_document = None  # what renders it is needed no more
        return encode(document() if callable(document) else document, escape_html=False)

    @functools.cached_property
    def v2_etag(self) -> str:
        return content_hash(self.v2_json)

    @functools.cached_property
    def v2_protobuf(self) -> bytes:
        """``v2_json`` as a gnostic ``openapi_v2.Document`` message (computed once)."""
        from .gnostic import encode_document

        return encode_document(json.loads(self.v2_json))

    # gzip-compressed forms, for clients that accept them (computed once each).
    v2_json_gzip = functools.cached_property(lambda self: gzip.compress(self.v2_json, mtime=0))
    v2_protobuf_gzip = functools.cached_property(
        lambda self: gzip.compress(self.v2_protobuf, mtime=0))


@dataclasses.dataclass(frozen=True)
class AggregatedSpec:
    """What another API server (an APIService's backend) adds to the documents.

    ``v2`` is its Swagger document reduced to the paths it may add (the aggregator keeps
    those under ``/apis/``; ``merge.filter_by_paths``), or ``None``; ``v3`` maps document
    keys (``apis/wardle.example.com/v1alpha1``) to the bytes it served for them.
    """

    name: str
    v2: dict | None = None
    v3: dict = dataclasses.field(default_factory=dict)


def server_relative_url(key: str, digest: str) -> str:
    """``constructServerRelativeURL``: ``/openapi/v3/<key>?hash=<digest>``."""
    return f"/openapi/v3/{key}?hash={digest}"


class OpenAPIBuilder:
    """Builds and caches the OpenAPI documents of a server's installed API groups.

    ``groups()`` returns the installed ``APIGroupInfo`` list each time it is called;
    ``version_info`` is the ``/version`` body (its major and minor name the documents).
    A resource handler's ``spec`` (``ResourceSpec``) and ``verbs`` decide its paths, as
    they decide discovery (the handlers of custom resources, ``custom_resource``, get the
    paths upstream's CRD builder gives them); kinds are described by the shipped upstream
    definitions, a spec's ``openapi_definitions``, or else as objects that keep unknown fields.

    ``issuer_discovery``: the server serves service-account issuer discovery
    (``/.well-known/openid-configuration``, ``/openid/v1/jwks``), described as upstream does.

    Call ``invalidate()`` whenever the installed groups, versions or resources change
    (custom resources, APIServices): the next request rebuilds every document.
    """

    def __init__(self, groups, version_info: dict, issuer_discovery: bool = False):
        self._groups = groups
        self._issuer_discovery = issuer_discovery
        self._info = {"title": "Kubernetes",
                      "version": f"{version_info['major']}.{version_info['minor']}"}
        self._lock = threading.Lock()
        self._documents: Documents | None = None
        self._aggregated: tuple[AggregatedSpec, ...] = ()

    def invalidate(self) -> None:
        """Forget the built documents; the next ``documents()`` call rebuilds them."""
        with self._lock:
            self._documents = None

    def set_aggregated(self, specs) -> None:
        """Merge other servers' documents into these from the next build on.

        ``specs`` (``AggregatedSpec``) come in merge order (the aggregator's: by APIService
        priority). This server's own documents win: a v3 key or v2 path it has already is
        not taken from another server, nor is one an earlier spec gave. Replaces the
        previous list and invalidates the documents.
        """
        with self._lock:
            self._aggregated = tuple(specs)
            self._documents = None

    def documents(self) -> Documents:
        """The current documents, built now if none are cached."""
        documents = self._documents
        if documents is None:
            with self._lock:
                if self._documents is None:
                    started = time.monotonic()
                    self._documents = self.build()
                    log.debug("built OpenAPI documents in %.3fs", time.monotonic() - started)
                documents = self._documents
        return documents

    def build(self) -> Documents:
        """Build every document from the groups installed now (no caching)."""
        groups = [group for group in self._groups() if group.versions]
        data = schemas.builtin()
        definitions = data["definitions"]
        models = schemas.models(definitions)
        for spec in _specs(groups):
            definitions.update(spec.openapi_definitions)
            models.update(schemas.models(spec.openapi_definitions))

        def model(spec) -> str:
            name = spec.openapi_model or models.get((spec.group, spec.version, spec.kind))
            if name in definitions:
                return name
            if name:
                log.warning("OpenAPI definition %s of %s not found; describing it as untyped",
                            name, spec.group_resource)
            name = schemas.untyped_name(spec.group, spec.version, spec.kind)
            definitions.setdefault(name, schemas.untyped_definition(
                spec.group, spec.version, spec.kind))
            return name

        def list_model(spec) -> str:
            name = models.get((spec.group, spec.version, spec.list_kind))
            if name in definitions:
                return name
            name = schemas.untyped_name(spec.group, spec.version, spec.list_kind)
            definitions.setdefault(name, schemas.list_definition(
                spec.group, spec.version, spec.kind, spec.list_kind, model(spec)))
            return name

        table = RouteTable(data["parameters"], model, list_model, data["options_parameters"])
        table.add_root(has_core=any(g.name == "" for g in groups),
                       has_named=any(g.name != "" for g in groups))
        if self._issuer_discovery:
            table.add_issuer_discovery()
        for group in groups:
            custom = {version: _serves_custom_resources(resources)
                      for version, resources in group.versions.items()}
            if group.name and not all(custom.values()):
                table.add_group(group.name)
            for version, resources in group.versions.items():
                if custom[version]:
                    table.add_custom_resource_version(group.name, version, resources)
                else:
                    table.add_group_version(group.name, version, resources)
        crd_definitions = (schemas.as_crd_builder_names(definitions)
                           if table.custom_resource_documents else definitions)
        v3_documents = {
            key: (v3.render(paths, crd_definitions, CRD_INFO, security_schemes=False)
                  if key in table.custom_resource_documents
                  else v3.render(paths, definitions, self._info))
            for key, paths in table.documents.items()}
        all_paths = {path: operations for paths in table.documents.values()
                     for path, operations in paths.items()}
        aggregated = self._aggregated

        def v2_document() -> dict:
            v2_definitions = dict(definitions)
            for spec in _specs(groups):
                v2_definitions.update(spec.openapi_v2_definitions)
            document = v2.render(all_paths, v2_definitions, self._info)
            for spec in aggregated:
                if spec.v2:
                    merge.merge(document, spec.v2)
            return merge.sort_maps(document)

        v3_encoded: dict[str, bytes] = {}
        for spec in aggregated:
            for key, data in spec.v3.items():
                if key not in v3_documents:
                    v3_encoded.setdefault(key, data)
        return Documents(v2_document, v3_documents, v3_encoded)


def _serves_custom_resources(resources: dict) -> bool:
    """Whether a group version's handlers serve custom resources (``custom_resource``), whose
    routes upstream's CRD OpenAPI builder describes rather than the API installer."""
    return bool(resources) and all(getattr(handler, "custom_resource", False)
                                   for handler in resources.values())


def _specs(groups):
    for group in groups:
        for resources in group.versions.values():
            for handler in resources.values():
                spec = getattr(handler, "spec", None)
                if spec is not None:
                    yield spec
