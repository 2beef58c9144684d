"""``ValidateCustomResourceDefinition`` and ``...Update``: a whole CRD, as upstream.

The order of the errors is upstream's: metadata, the spec (group, scope, schemas required,
each version, the version list, names, the top-level schema, subresources, columns and
selectable fields, conversion), the accepted names, the stored versions, the API approval
annotation of protected groups, and ``preserveUnknownFields``. On update the rules the
stored CRD already breaks are relaxed, as upstream's ``validationOptions`` do.
"""

from __future__ import annotations

from dataclasses import replace
from urllib.parse import urlsplit

from kapiserver.apimachinery.field_errors import FieldError, FieldPath
from kapiserver.apimachinery.validation import (is_dns1035_label, is_dns1123_subdomain,
                                                name_is_dns_subdomain, validate_immutable_field,
                                                validate_object_meta,
                                                validate_object_meta_update)

from .conversion import ca_bundle_errors, has_valid_review_version_or_empty, \
    validate_conversion
from .defaults_check import has_unpruned_defaults
from .gosyntax import go_versions
from .internal import (InternalSpec, Options, all_schemas, as_dict, as_list, as_str,
                       openapi_schema, spec_has, to_internal)
from .names import validate_names, validate_status, validate_stored_versions
from .openapi import OPENAPI_V3_TYPES, map_list_keys_map_set_errors, validate_validation
from .structural import new_structural_error, validate_structural
from .versions import selectable_fields_errors, validate_column, validate_subresources, \
    validate_version

__all__ = ["validate_crd", "validate_crd_update", "update_options"]

APPROVAL_ANNOTATION = "api-approved.kubernetes.io"
_EXTENSIONS = ("x-kubernetes-embedded-resource", "x-kubernetes-int-or-string",
               "x-kubernetes-list-map-keys", "x-kubernetes-list-type",
               "x-kubernetes-validations")


def _has_extensions(s: dict) -> bool:
    # schemaHasKubernetesExtensions: a preserve-unknown-fields of any value counts
    return s.get("x-kubernetes-preserve-unknown-fields") is not None or any(
        s.get(key) for key in _EXTENSIONS)


def _status_enabled(subresources) -> bool:
    return as_dict(subresources).get("status") is not None


def _subresources_for(spec: InternalSpec, name: str):
    """``getSubresourcesForVersion``."""
    if not any(v.get("subresources") is not None for v in spec.versions or []):
        return spec.subresources
    for version in spec.versions or []:
        if version.get("name") == name:
            return version.get("subresources")
    return None


def _any_status_enabled(spec: InternalSpec) -> bool:
    return _status_enabled(spec.subresources) or any(
        _status_enabled(v.get("subresources")) for v in spec.versions or [])


def _validate_spec(spec: InternalSpec, opts: Options, path: FieldPath) -> list[FieldError]:
    """``validateCustomResourceDefinitionSpec``."""
    errs = []
    group_path = path.child("group")
    if not spec.group:
        errs.append(FieldError.required(group_path, ""))
    elif msgs := is_dns1123_subdomain(spec.group):
        errs.append(FieldError.invalid(group_path, spec.group, ",".join(msgs)))
    elif len(spec.group.split(".")) < 2:
        errs.append(FieldError.invalid(group_path, spec.group,
                                       "should be a domain with at least one dot"))
    if not spec.scope:
        errs.append(FieldError.required(path.child("scope"), ""))
    elif spec.scope not in ("Cluster", "Namespaced"):
        errs.append(FieldError.not_supported(path.child("scope"), spec.scope,
                                             ["Cluster", "Namespaced"]))
    if not spec.preserve_unknown_fields:
        # enabling pruning requires structural schemas
        opts = replace(opts, require_structural_schema=True)
    versions = spec.versions or []
    if openapi_schema(spec.validation) is None:
        for i, version in enumerate(versions):
            if openapi_schema(version.get("schema")) is not None:
                continue
            at = path.child("versions").index(i).child("schema", "openAPIV3Schema")
            if opts.require_open_api_schema:
                errs.append(FieldError.required(at, "schemas are required"))
            elif not spec.preserve_unknown_fields and version.get("served") is True:
                errs.append(FieldError.required(at, "because otherwise all fields are pruned"))
    if opts.allow_defaults and spec_has(spec, lambda s: s.get("default") is not None):
        opts = replace(opts, require_structural_schema=True)
        if spec.preserve_unknown_fields:
            errs.append(FieldError.invalid(path.child("preserveUnknownFields"), True,
                                           "must be false in order to use defaults in the "
                                           "schema"))
    if spec_has(spec, _has_extensions):
        opts = replace(opts, require_structural_schema=True)
    storage, names, unique = 0, set(), True
    for i, version in enumerate(versions):
        name = as_str(version.get("name"))
        storage += version.get("storage") is True
        unique = unique and name not in names
        names.add(name)
        if msgs := is_dns1035_label(name):
            errs.append(FieldError.invalid(path.child("versions").index(i).child("name"), name,
                                           ",".join(msgs)))
        errs += validate_version(version, path.child("versions").index(i),
                                 _status_enabled(_subresources_for(spec, name)), opts)
    if not unique:
        errs.append(FieldError.invalid(path.child("versions"), go_versions(spec.versions),
                                       "must contain unique version names"))
    if storage != 1:
        errs.append(FieldError.invalid(path.child("versions"), go_versions(spec.versions),
                                       "must have exactly one version marked as storage "
                                       "version"))
    # spec.version is the first version's name once converted: checked a second time here
    if spec.version and (msgs := is_dns1035_label(spec.version)):
        errs.append(FieldError.invalid(path.child("version"), spec.version, ",".join(msgs)))
    for field in ("plural", "singular", "kind", "listKind"):
        if not as_str(spec.names.get(field)):
            errs.append(FieldError.required(path.child("names", field), ""))
    errs += validate_names(spec.names, path.child("names"))
    errs += validate_validation(spec.validation, _any_status_enabled(spec),
                               opts.for_version(spec.version), path.child("validation"))
    errs += validate_subresources(spec.subresources, path.child("subresources"))
    for i, column in enumerate(spec.columns or []):
        errs += validate_column(column, path.child("additionalPrinterColumns").index(i))
    if spec.selectable_fields:
        if spec.validation is None:
            errs.append(FieldError.invalid(path.child("selectableFields"), "",
                                           "selectableFields may only be set when "
                                           "validations.schema is included"))
        else:
            errs += selectable_fields_errors(spec.selectable_fields,
                                             openapi_schema(spec.validation),
                                             path.child("selectableFields"),
                                             path.child("schema.openAPIV3Schema"))
    conversion = spec.conversion
    if conversion is not None and conversion["strategy"] != "None" \
            and spec.preserve_unknown_fields:
        errs.append(FieldError.invalid(path.child("conversion").child("strategy"),
                                       conversion["strategy"],
                                       "must be None if spec.preserveUnknownFields is true"))
    errs += validate_conversion(conversion, opts.require_recognized_conversion_review_version,
                                path.child("conversion"), opts)
    return errs


# -- the API approval of protected groups (apihelpers) --------------------------------------


def _protected_group(group: str) -> bool:
    """``IsProtectedCommunityGroup``: k8s.io and kubernetes.io and their subdomains."""
    return group in ("k8s.io", "kubernetes.io") or group.endswith((".k8s.io", ".kubernetes.io"))


def _approval_state(annotations: dict) -> tuple[str, str]:
    """``GetAPIApprovalState``: (state, reason)."""
    value = as_str(annotations.get(APPROVAL_ANNOTATION))
    if not value:
        return "missing", (f'protected groups must have approval annotation '
                           f'"{APPROVAL_ANNOTATION}", see '
                           "https://github.com/kubernetes/enhancements/pull/1111")
    if value.startswith("unapproved"):
        return "bypassed", ""
    try:
        parts = urlsplit(value)
        approved = bool(parts.scheme and parts.netloc) and not any(c.isspace() for c in value)
    except ValueError:
        approved = False
    if approved:
        return "approved", ""
    return "invalid", (f'protected groups must have approval annotation "{APPROVAL_ANNOTATION}" '
                       'with either a URL or a reason starting with "unapproved", see '
                       "https://github.com/kubernetes/enhancements/pull/1111")


def _validate_api_approval(new: dict, old: dict | None) -> list[FieldError]:
    """``validateAPIApproval``: only when the approval state changes."""
    if not _protected_group(as_str(as_dict(new.get("spec")).get("group"))):
        return []
    annotations = as_dict(as_dict(new.get("metadata")).get("annotations"))
    state, reason = _approval_state(annotations)
    if old is not None:
        old_state, _ = _approval_state(as_dict(as_dict(old.get("metadata")).get("annotations")))
        if old_state == state:
            return []
    at = FieldPath("metadata", "annotations").key(APPROVAL_ANNOTATION)
    if state == "missing":
        return [FieldError.required(at, reason)]
    if state == "invalid":
        return [FieldError.invalid(at, as_str(annotations.get(APPROVAL_ANNOTATION)), reason)]
    return []


def _validate_preserve_unknown_fields(new: InternalSpec,
                                      old: InternalSpec | None) -> list[FieldError]:
    """``validatePreserveUnknownFields``: v1 CRDs prune; only an old CRD may keep true."""
    if old is not None and old.preserve_unknown_fields:
        return []
    if new.preserve_unknown_fields:
        return [FieldError.invalid(FieldPath("spec", "preserveUnknownFields"), True,
                                   "cannot set to true, set x-kubernetes-preserve-unknown-fields "
                                   "to true in spec.versions[*].schema instead")]
    return []


def _crd_name_validator(spec: InternalSpec):
    required = as_str(spec.names.get("plural")) + "." + spec.group

    def validate(name: str, prefix: bool) -> list[str]:
        msgs = name_is_dns_subdomain(name, prefix)
        if name != required:
            msgs.append('must be spec.names.plural+"."+spec.group')
        return msgs

    return validate


def _status(crd: dict) -> dict:
    return as_dict(crd.get("status"))


def validate_crd(crd: dict) -> list[FieldError]:
    """``ValidateCustomResourceDefinition``: a CRD being created (after defaulting and
    ``PrepareForCreate``)."""
    spec = to_internal(crd.get("spec"))
    meta = as_dict(crd.get("metadata"))
    errs = validate_object_meta(meta, False, _crd_name_validator(spec), FieldPath("metadata"))
    errs += _validate_spec(spec, Options(), FieldPath("spec"))
    errs += validate_status(_status(crd), FieldPath("status"))
    # PrepareForCreate leaves a nil list when no version is the storage version
    stored = _status(crd).get("storedVersions") or None
    errs += validate_stored_versions(stored, spec.versions,
                                     FieldPath("status", "storedVersions"))
    errs += _validate_api_approval(crd, None)
    errs += _validate_preserve_unknown_fields(spec, None)
    return errs


# -- update ---------------------------------------------------------------------------------


def _established(crd: dict) -> bool:
    return any(as_dict(c).get("type") == "Established" and as_dict(c).get("status") == "True"
               for c in as_list(_status(crd).get("conditions")))


def _allow_invalid_ca_bundle(old: dict, old_spec: InternalSpec) -> bool:
    """``allowInvalidCABundle``: until established, or while the stored bundle is bad."""
    if not _established(old):
        return True
    config = (old_spec.conversion or {}).get("webhookClientConfig") or {}
    bundle = config.get("caBundle")
    if not bundle:
        return False
    return bool(ca_bundle_errors(FieldPath("caBundle"), bundle))


def _non_atomic_set(s: dict) -> bool:
    item = s.get("items")
    if s.get("x-kubernetes-list-type") != "set" or not isinstance(item, dict):
        return False
    if item.get("type") == "array":
        return item.get("x-kubernetes-list-type") not in (None, "atomic")
    if item.get("type") == "object":
        return item.get("x-kubernetes-map-type") != "atomic"
    return False


def _non_structural(schema: dict) -> bool:
    return bool(new_structural_error(schema)) or bool(validate_structural(schema, FieldPath("")))


def _schema_for_version(spec: InternalSpec, name: str):
    """``GetSchemaForVersion``: the top-level schema, else the version's own."""
    if spec.validation is not None:
        return spec.validation
    for version in spec.versions or []:
        if version.get("name") == name:
            return version.get("schema")
    return None


def _unchanged_versions(spec: InternalSpec, old_spec: InternalSpec) -> frozenset:
    """``findVersionsWithUnchangedSchemas``."""
    old_names = {v.get("name") for v in old_spec.versions or []}
    return frozenset(
        v.get("name") for v in spec.versions or []
        if v.get("name") in old_names
        and _schema_for_version(spec, v.get("name")) == _schema_for_version(old_spec,
                                                                              v.get("name")))


def update_options(old: dict, old_spec: InternalSpec,
                   spec: InternalSpec | None = None) -> Options:
    """The ratcheting of ``ValidateCustomResourceDefinitionUpdate``."""
    conversion = old_spec.conversion
    versions = old_spec.versions or []
    return Options(
        require_recognized_conversion_review_version=conversion is None
        or has_valid_review_version_or_empty(conversion.get("conversionReviewVersions")),
        require_immutable_names=_established(old),
        require_open_api_schema=openapi_schema(old_spec.validation) is not None
        or all(openapi_schema(v.get("schema")) is not None for v in versions),
        require_valid_property_type=not spec_has(
            old_spec, lambda s: bool(s.get("type")) and s.get("type") not in OPENAPI_V3_TYPES),
        require_structural_schema=not any(_non_structural(s) for s in all_schemas(old_spec)),
        require_pruned_defaults=not any(has_unpruned_defaults(s)
                                        for s in all_schemas(old_spec)),
        require_atomic_set_type=not spec_has(old_spec, _non_atomic_set),
        require_map_list_keys_map_set_validation=not spec_has(
            old_spec, lambda s: bool(map_list_keys_map_set_errors(s, FieldPath("")))),
        allow_invalid_ca_bundle=_allow_invalid_ca_bundle(old, old_spec),
        unchanged_versions=_unchanged_versions(spec, old_spec) if spec else frozenset())


def validate_crd_update(new: dict, old: dict) -> list[FieldError]:
    """``ValidateCustomResourceDefinitionUpdate``: the new CRD (its status already carried
    over by ``PrepareForUpdate``) against the stored one."""
    spec, old_spec = to_internal(new.get("spec")), to_internal(old.get("spec"))
    opts = update_options(old, old_spec, spec)
    path = FieldPath("spec")
    errs = validate_object_meta_update(as_dict(new.get("metadata")),
                                       as_dict(old.get("metadata")), FieldPath("metadata"))
    errs += _validate_spec(spec, opts, path)
    if opts.require_immutable_names:
        # these affect the storage and cannot change once the CRD is established
        errs += validate_immutable_field(spec.scope, old_spec.scope, path.child("scope"))
        errs += validate_immutable_field(as_str(spec.names.get("kind")),
                                         as_str(old_spec.names.get("kind")),
                                         path.child("names", "kind"))
    # these make up the resource's name, which is always immutable
    errs += validate_immutable_field(spec.group, old_spec.group, path.child("group"))
    errs += validate_immutable_field(as_str(spec.names.get("plural")),
                                     as_str(old_spec.names.get("plural")),
                                     path.child("names", "plural"))
    errs += validate_status(_status(new), FieldPath("status"))
    errs += validate_stored_versions(_status(new).get("storedVersions"), spec.versions,
                                     FieldPath("status", "storedVersions"))
    errs += _validate_api_approval(new, old)
    errs += _validate_preserve_unknown_fields(spec, old_spec)
    return errs

