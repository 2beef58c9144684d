"""ServiceAccounts: secret references trimmed to their names, and the NAME/SECRETS/AGE table."""

from kapiserver.registry.printers import AGE_COLUMN, NAME_COLUMN, age
from kapiserver.registry.resource import ResourceSpec
from kapiserver.registry.strategy import Strategy

SERVICEACCOUNTS = ResourceSpec(group="", version="v1", kind="ServiceAccount",
                               resource="serviceaccounts", singular="serviceaccount",
                               namespaced=True, short_names=("sa",),
                               storage_version_hash="pbx9ZvyFpBE=")
SECRETS_COLUMN = {
    "name": "Secrets", "type": "string", "format": "",
    "description": "Secrets is a list of the secrets in the same namespace that pods running "
                   "using this ServiceAccount are allowed to use. Pods are only limited to this "
                   "list if this service account has a \"kubernetes.io/enforce-mountable-"
                   "secrets\" annotation set to \"true\". The \"kubernetes.io/enforce-mountable-"
                   "secrets\" annotation is deprecated since v1.32. Prefer separate namespaces "
                   "to isolate access to mounted secrets. This field should not be used to find "
                   "auto-generated service account token secrets for use outside of pods. "
                   "Instead, tokens can be requested directly using the TokenRequest API, or "
                   "service account token secrets can be manually created. More info: "
                   "https://kubernetes.io/docs/concepts/configuration/secret",
    "priority": 0}


class ServiceAccountStrategy(Strategy):
    """``pkg/registry/core/serviceaccount`` strategy (``ValidateServiceAccount`` is metadata)."""

    merge_keys = {"secrets": "name"}
    # The registry is built with ReturnDeletedObject: DELETE answers with the object.
    return_deleted_object = True

    def prepare_for_create(self, obj):
        super().prepare_for_create(obj)
        _clean_secret_references(obj)

    def prepare_for_update(self, new, old):
        super().prepare_for_update(new, old)
        _clean_secret_references(new)

    def table_columns(self):
        return [NAME_COLUMN, SECRETS_COLUMN, AGE_COLUMN]

    def table_cells(self, obj):
        meta = obj.get("metadata") or {}
        return [meta.get("name", ""), len(obj.get("secrets") or []),
                age(meta.get("creationTimestamp"))]


def _clean_secret_references(obj: dict) -> None:
    # Upstream's cleanSecretReferences: a reference keeps only the secret's name.
    secrets = obj.get("secrets")
    if isinstance(secrets, list):
        obj["secrets"] = [{"name": ref["name"]} if isinstance(ref, dict) and ref.get("name")
                          else {} for ref in secrets]
