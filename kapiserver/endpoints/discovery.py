"""Discovery documents: ``/api``, ``/api/v1``, ``/apis``, ``/apis/G``, ``/apis/G/V``.

Built from the ``ResourceSpec`` of every installed resource handler, in upstream's
shapes (``APIVersions``, ``APIGroupList``, ``APIGroup``, ``APIResourceList``).
"""

from __future__ import annotations

import hashlib

from ..serialization import dumps_json

#: The aggregated discovery versions served, newest first.
AGGREGATED_VERSIONS = ("v2", "v2beta1")


def discovery_verbs(handler) -> list[str]:
    """The verbs discovery lists for ``handler``: sorted, as upstream's built-ins list them,
    unless the handler names its own order (``discovery_verbs``: custom resources)."""
    ordered = getattr(handler, "discovery_verbs", None)
    if ordered is not None:
        return list(ordered)
    return sorted(getattr(handler, "verbs", handler.spec.verbs))


class RemoteGroup:
    """A group served by another server (an aggregated APIService): ``versions`` maps each
    version, preferred first, to its ``APIResourceDiscovery`` entries as the backend's
    aggregated discovery gave them, or ``None`` while unknown."""

    remote = True

    def __init__(self, name: str, versions: dict):
        self.name = name
        self.versions = versions


class Discovery:
    """Discovery over installed groups; ``document(path)`` returns bytes or ``None``."""

    def __init__(self, groups, server_address: str):
        # groups: APIGroupInfo list, each version {path: handler with .spec}, in the order
        # discovery lists them; RemoteGroup entries are served by another server.
        self.all_groups = [g for g in groups if g.versions]
        #: The groups served here (what OpenAPI documents).
        self.groups = [g for g in self.all_groups if not getattr(g, "remote", False)]
        self.server_address = server_address
        # The documents are built when first asked for: at start-up the groups change many
        # times (each APIService the aggregator registers) before anyone reads them.
        self._documents: dict[str, bytes] | None = None
        self._aggregated: dict | None = None

    def _build(self) -> None:
        self._documents, self._aggregated = self._built()

    def _built(self) -> tuple[dict, dict]:
        documents, named = {}, []
        for group in self.all_groups:
            versions = list(group.versions)
            if getattr(group, "remote", False):
                # Listed here; the backend answers for its versions (the aggregator proxies).
                entry = {"name": group.name,
                         "versions": [{"groupVersion": f"{group.name}/{v}", "version": v}
                                      for v in versions],
                         "preferredVersion": {"groupVersion": f"{group.name}/{versions[0]}",
                                              "version": versions[0]}}
                named.append(entry)
                documents[f"/apis/{group.name}"] = dumps_json(
                    {"kind": "APIGroup", "apiVersion": "v1", **entry})
                continue
            if group.name == "":
                documents["/api"] = dumps_json({
                    "kind": "APIVersions", "versions": versions,
                    "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0",
                                                    "serverAddress": self.server_address}]})
            else:
                entry = {"name": group.name,
                         "versions": [{"groupVersion": f"{group.name}/{v}", "version": v}
                                      for v in versions],
                         "preferredVersion": {"groupVersion": f"{group.name}/{versions[0]}",
                                              "version": versions[0]}}
                named.append(entry)
                documents[f"/apis/{group.name}"] = dumps_json(
                    {"kind": "APIGroup", "apiVersion": "v1", **entry})
            for version, resources in group.versions.items():
                gv = f"{group.name}/{version}" if group.name else version
                document = {"kind": "APIResourceList", "groupVersion": gv,
                            "resources": [self._resource(path, handler, group.name, version)
                                          for path, handler in sorted(resources.items())
                                          if getattr(handler, "spec", None) is not None]}
                if group.name:
                    document = {"kind": "APIResourceList", "apiVersion": "v1",
                                "groupVersion": gv, "resources": document["resources"]}
                    documents[f"/apis/{gv}"] = dumps_json(document)
                else:
                    documents[f"/api/{version}"] = dumps_json(document)
        documents["/apis"] = dumps_json({"kind": "APIGroupList", "apiVersion": "v1",
                                         "groups": named})
        aggregated = {}
        for path, groups in (("/api", [g for g in self.all_groups if g.name == ""]),
                             ("/apis", [g for g in self.all_groups if g.name != ""])):
            items = [self._aggregated_group(g) for g in groups]
            # calculateETag: SHA-512 of json.Marshal of the list without its type (no
            # newline; the same for every version and encoding, Vary: Accept parts them).
            marshalled = dumps_json({"metadata": {}, "items": items}).removesuffix(b"\n")
            etag = '"' + hashlib.sha512(marshalled).hexdigest().upper() + '"'
            for version in AGGREGATED_VERSIONS:
                body = dumps_json({"kind": "APIGroupDiscoveryList",
                                   "apiVersion": f"apidiscovery.k8s.io/{version}",
                                   "metadata": {}, "items": items})
                aggregated[path, version] = (body, etag)
        return documents, aggregated

    @staticmethod
    def _resource(path: str, handler, group: str = "", version: str = "") -> dict:
        spec = handler.spec
        resource = {"name": path, "singularName": spec.singular if "/" not in path else "",
                    "namespaced": spec.namespaced}
        if (spec.group, spec.version) != (group, version):
            # A subresource of another group's kind (serviceaccounts/token: TokenRequest).
            resource.update(group=spec.group, version=spec.version)
        resource.update(kind=spec.kind, verbs=discovery_verbs(handler))
        if "/" not in path:
            if spec.short_names:
                resource["shortNames"] = list(spec.short_names)
            if spec.categories:
                resource["categories"] = list(spec.categories)
            if spec.storage_version_hash:
                resource["storageVersionHash"] = spec.storage_version_hash
        return resource

    def _aggregated_group(self, group) -> dict:
        """One ``APIGroupDiscovery``: every version with its resources and subresources."""
        metadata = {"name": group.name} if group.name else {}
        metadata["creationTimestamp"] = None
        versions = []
        if getattr(group, "remote", False):
            # The backend's own aggregated entries, or none yet: Stale, as upstream marks a
            # version whose backend has not answered.
            for version, resources in group.versions.items():
                versions.append({"version": version, "resources": list(resources or []),
                                 "freshness": "Current" if resources is not None else "Stale"})
            return {"metadata": metadata, "versions": versions}
        for version, resources in group.versions.items():
            entries, subresources = {}, {}
            for path, handler in sorted(resources.items()):
                spec = getattr(handler, "spec", None)
                if spec is None:
                    continue
                foreign = (spec.group, spec.version) != (group.name, version)
                kind = {"group": spec.group if foreign else "",
                        "version": spec.version if foreign else "", "kind": spec.kind}
                verbs = discovery_verbs(handler)
                if "/" in path:
                    parent, sub = path.split("/", 1)
                    subresources.setdefault(parent, []).append(
                        {"subresource": sub, "responseKind": kind, "verbs": verbs})
                    continue
                entry = {"resource": path, "responseKind": kind,
                         "scope": "Namespaced" if spec.namespaced else "Cluster",
                         "singularResource": spec.singular, "verbs": verbs}
                if spec.short_names:
                    entry["shortNames"] = list(spec.short_names)
                if spec.categories:
                    entry["categories"] = list(spec.categories)
                entries[path] = entry
            for parent, subs in subresources.items():
                if parent in entries:
                    entries[parent]["subresources"] = subs
            versions.append({"version": version, "resources": list(entries.values()),
                             "freshness": "Current"})
        return {"metadata": metadata, "versions": versions}

    def aggregated(self, path: str, accept: str):
        """``(body, content type, etag)`` when ``accept`` asks for aggregated discovery of
        ``/api`` or ``/apis``; ``None`` otherwise (the client gets the legacy documents)."""
        path = path.rstrip("/")
        if path not in ("/api", "/apis") or "g=apidiscovery.k8s.io" not in accept:
            return None
        for item in accept.split(","):
            params = dict(p.strip().partition("=")[::2] for p in item.split(";")[1:])
            if params.get("g") == "apidiscovery.k8s.io" and \
                    params.get("as") == "APIGroupDiscoveryList" and \
                    params.get("v") in AGGREGATED_VERSIONS:
                if self._aggregated is None:
                    self._build()
                body, etag = self._aggregated[path, params["v"]]
                content_type = (f"application/json;g=apidiscovery.k8s.io;v={params['v']};"
                                "as=APIGroupDiscoveryList")
                return body, content_type, etag
        return None

    def document(self, path: str) -> bytes | None:
        if self._documents is None:
            self._build()
        return self._documents.get(path.rstrip("/") or path)
