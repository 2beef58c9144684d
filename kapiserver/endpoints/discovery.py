"""Discovery documents: ``/api``, ``/api/v1``, ``/apis``, ``/apis/G``, ``/apis/G/V``.

Built from the ``ResourceSpec`` of every installed resource handler, in upstream's
shapes (``APIVersions``, ``APIGroupList``, ``APIGroup``, ``APIResourceList``).
"""

from __future__ import annotations

from ..serialization import dumps_json


class Discovery:
    """Discovery over installed groups; ``document(path)`` returns bytes or ``None``."""

    def __init__(self, groups, server_address: str):
        # groups: APIGroupInfo list, each version {path: handler with .spec}
        self.groups = [g for g in groups if g.versions]
        self.server_address = server_address
        self._documents: dict[str, bytes] = {}
        self._build()

    def _build(self) -> None:
        named = []
        for group in self.groups:
            versions = list(group.versions)
            if group.name == "":
                self._documents["/api"] = dumps_json({
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
                self._documents[f"/apis/{group.name}"] = dumps_json(
                    {"kind": "APIGroup", "apiVersion": "v1", **entry})
            for version, resources in group.versions.items():
                gv = f"{group.name}/{version}" if group.name else version
                document = {"kind": "APIResourceList", "groupVersion": gv,
                            "resources": [self._resource(path, handler)
                                          for path, handler in sorted(resources.items())
                                          if getattr(handler, "spec", None) is not None]}
                if group.name:
                    document = {"kind": "APIResourceList", "apiVersion": "v1",
                                "groupVersion": gv, "resources": document["resources"]}
                    self._documents[f"/apis/{gv}"] = dumps_json(document)
                else:
                    self._documents[f"/api/{version}"] = dumps_json(document)
        self._documents["/apis"] = dumps_json({"kind": "APIGroupList", "apiVersion": "v1",
                                               "groups": named})

    @staticmethod
    def _resource(path: str, handler) -> dict:
        spec = handler.spec
        resource = {"name": path, "singularName": spec.singular if "/" not in path else "",
                    "namespaced": spec.namespaced, "kind": spec.kind,
                    "verbs": sorted(getattr(handler, "verbs", spec.verbs))}
        if "/" not in path:
            if spec.short_names:
                resource["shortNames"] = list(spec.short_names)
            if spec.categories:
                resource["categories"] = list(spec.categories)
            if spec.storage_version_hash:
                resource["storageVersionHash"] = spec.storage_version_hash
        return resource

    def document(self, path: str) -> bytes | None:
        return self._documents.get(path.rstrip("/") or path)
