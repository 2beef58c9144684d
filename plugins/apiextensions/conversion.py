"""Custom-resource version conversion (upstream's ``apiextensions-apiserver`` ``conversion``).

``converter_for(crd, ...)`` returns the converter of a CRD's ``spec.conversion``: with
the ``None`` strategy only ``apiVersion`` changes (``nopConverter``); with ``Webhook``
the objects go to the CRD's webhook in a ``ConversionReview`` (the first review version
the CRD lists that the server speaks), over TLS verified with the ``caBundle``, by URL or
through a Service resolved as the server's other clients resolve one. The answer is
checked as upstream checks it — the review's kind and uid, the result, as many objects as
were sent, each in the desired version and of the same kind and identity, metadata
changed only in labels and annotations (the rest restored) — and every failure is a
``ConversionError`` worded as upstream's (``conversion webhook for <gvk> failed: ...``).

Departure from upstream: a ``caBundle`` that holds no certificate fails the conversions
that need the webhook, not every request for the CRD (kubernetes#123835).
"""

from __future__ import annotations

import copy
import functools
import json
import logging
import uuid

from kapiserver.runtime.gotypes import go_type_name, json_kind

log = logging.getLogger(__name__)

REVIEW_GROUP = "apiextensions.k8s.io"
#: The review versions this server speaks, as upstream's webhook converter.
REVIEW_VERSIONS = ("v1beta1", "v1")
#: Upstream's webhook client timeout, sent as its ``?timeout=`` query parameter too.
TIMEOUT = 30


class ConversionError(Exception):
    """A conversion failed; the message is upstream's."""


def converter_for(crd: dict, resolve_service, material_dir: str) -> "CRConverter":
    """The converter of ``crd``'s versions; ``resolve_service(namespace, name, port)``
    gives the address of a webhook Service, ``material_dir`` receives CA bundle files."""
    spec = crd.get("spec") or {}
    strategy = (spec.get("conversion") or {}).get("strategy") or "None"
    if strategy == "None":
        delegate = NopConverter()
    elif strategy == "Webhook":
        delegate = WebhookConverter(crd, resolve_service, material_dir)
    else:
        raise ConversionError(f"unknown conversion strategy {json.dumps(strategy)} for CRD "
                              f"{(crd.get('metadata') or {}).get('name', '')}")
    return CRConverter(crd, delegate)


class CRConverter:
    """Upstream's ``crConverter``: both versions must be the CRD's, then the strategy's
    converter runs. ``remote`` tells whether converting may wait on the network."""

    def __init__(self, crd: dict, delegate):
        spec = crd.get("spec") or {}
        group = spec.get("group", "")
        self.valid = frozenset(f"{group}/{v.get('name', '')}" for v in spec.get("versions") or [])
        self.delegate = delegate
        self.remote = delegate.remote

    def convert(self, objects: list[dict], api_version: str) -> list[dict]:
        """``objects`` in ``api_version`` (one object is converted as a single object,
        several as a list, with upstream's messages for each). The objects given may be
        changed (upstream's unsafe converter): pass copies to keep them."""
        if api_version not in self.valid:
            raise ConversionError(f"request to convert CR to an invalid group/version: "
                                  f"{api_version}")
        for index, obj in enumerate(objects):
            version = obj.get("apiVersion", "")
            if version not in self.valid:
                if len(objects) == 1:
                    raise ConversionError(f"request to convert CR from an invalid "
                                          f"group/version: {_group_version(version)}")
                raise ConversionError(f"request to convert CR list failed, list index {index} "
                                      f"has invalid group/version: {_group_version(version)}")
        return self.delegate.convert(objects, api_version)

    def close(self) -> None:
        self.delegate.close()


class NopConverter:
    """The ``None`` strategy: the objects keep their fields, in the desired version."""

    remote = False

    def convert(self, objects: list[dict], api_version: str) -> list[dict]:
        for obj in objects:
            obj["apiVersion"] = api_version
        return objects

    def close(self) -> None:
        pass


class WebhookConverter:
    """The ``Webhook`` strategy (see the module docstring); one client per CRD, whose
    connections stay open between conversions."""

    remote = True

    def __init__(self, crd: dict, resolve_service, material_dir: str):
        from kapiserver.webhookclient import WebhookClient

        webhook = ((crd.get("spec") or {}).get("conversion") or {}).get("webhook") or {}
        self.review_versions = list(webhook.get("conversionReviewVersions") or ())
        config = webhook.get("clientConfig") or {}
        self.setup_error = ""
        verify = True
        if config.get("caBundle"):
            try:
                verify = ca_bundle_file(config["caBundle"], material_dir)
            except ValueError as err:
                self.setup_error = str(err)
        dial = None
        service = config.get("service")
        if service:
            namespace, name = service.get("namespace", ""), service.get("name", "")
            port = service.get("port") or 443
            url = f"https://{name}.{namespace}.svc:{port}{service.get('path') or '/'}"
            dial = functools.partial(resolve_service, namespace, name, port)
        else:
            url = config.get("url", "")
        url += ("&" if "?" in url else "?") + f"timeout={TIMEOUT}s"
        # No retries: upstream's REST client does not retry a POST.
        self.client = WebhookClient(url, verify, retry_steps=1, dial=dial, timeout=TIMEOUT)

    def close(self) -> None:
        self.client.close()

    def convert(self, objects: list[dict], api_version: str) -> list[dict]:
        single = len(objects) == 1
        if single and set(objects[0]) == {"apiVersion", "kind"}:
            # An empty object converts as with None (upstream's special case).
            return NopConverter().convert(objects, api_version)
        gvk = _gvk(objects[0] if objects else {})
        review_version = next((v for v in self.review_versions if v in REVIEW_VERSIONS), None)
        if review_version is None:
            raise ConversionError("no supported conversion review versions")
        originals = [obj for obj in objects if obj.get("apiVersion") != api_version]
        if not originals:
            return objects
        if self.setup_error:
            raise ConversionError(f"conversion webhook for {gvk} failed: {self.setup_error}")
        converted = self._call(originals, api_version, review_version, gvk)
        if len(converted) != len(originals):
            raise ConversionError(f"conversion webhook for {gvk} returned {len(converted)} "
                                  f"objects, expected {len(originals)}")
        if single:
            return [_checked(objects[0], converted[0], api_version, gvk, None)]
        results, index = [], 0
        for obj in objects:
            if obj.get("apiVersion") == api_version:
                results.append(obj)
                continue
            results.append(_checked(obj, converted[index], api_version, gvk, index))
            index += 1
        return results

    def _call(self, objects: list[dict], api_version: str, review_version: str,
              gvk: str) -> list:
        from kapiserver.webhookclient import WebhookError

        uid = str(uuid.uuid4())
        # Field order as upstream's Go structs write them.
        review = {"kind": "ConversionReview", "apiVersion": f"{REVIEW_GROUP}/{review_version}",
                  "request": {"uid": uid, "desiredAPIVersion": api_version, "objects": objects},
                  "response": {"uid": "", "convertedObjects": None,
                               "result": {"metadata": {}}}}
        try:
            answer = self.client.post(review)
        except WebhookError as err:
            raise ConversionError(f"conversion webhook for {gvk} failed: {err}") from None
        try:
            return _converted_objects(answer, review_version, uid)
        except ValueError as err:
            raise ConversionError(f"conversion webhook for {gvk} failed: {err}") from None


def ca_bundle_file(bundle: str, material_dir: str) -> str:
    """The file holding the base64 PEM ``bundle`` (requests reads CAs from files);
    ``ValueError`` worded as upstream's when it holds no certificate."""
    import base64
    import ssl

    from kapiserver.webhookclient import write_material

    try:
        data = base64.b64decode(bundle, validate=True)
        ssl.create_default_context(cadata=data.decode("ascii"))
    except (ValueError, ssl.SSLError):
        raise ValueError("unable to load root certificates: unable to parse bytes as PEM "
                         "block") from None
    return write_material(material_dir, data, "-ca.crt")


# -- checking the answer ---------------------------------------------------------------------


def _converted_objects(answer: dict, review_version: str, uid: str) -> list:
    """``getConvertedObjectsFromResponse``: the converted objects, or ValueError."""
    if review_version == "v1":
        got = _gvk(answer)
        if got != f"{REVIEW_GROUP}/v1, Kind=ConversionReview":
            raise ValueError(f"expected webhook response of {REVIEW_GROUP}/v1, "
                             f"Kind=ConversionReview, got {got}")
    response = answer.get("response")
    if response is None:
        raise ValueError("no response provided")
    _expect(response, dict, "ConversionReview.response", f"{review_version}.ConversionResponse")
    result = response.get("result") or {}
    _expect(result, dict, "ConversionReview.response.result", "v1.Status")
    if review_version == "v1":
        # v1beta1 reviews were never checked for their uid (upstream keeps it so).
        got_uid = response.get("uid") or ""
        _expect(got_uid, str, "ConversionReview.response.uid", "types.UID")
        if got_uid != uid:
            from kapiserver.apimachinery.field_errors import go_quote

            raise ValueError(f"expected response.uid={go_quote(uid)}, got {go_quote(got_uid)}")
    status, message = result.get("status") or "", result.get("message") or ""
    _expect(status, str, "ConversionReview.response.result.status", "string")
    _expect(message, str, "ConversionReview.response.result.message", "string")
    if status != "Success":
        raise ValueError(message or f"response.result.status was '{status}', not 'Success'")
    converted = response.get("convertedObjects") or []
    _expect(converted, list, "ConversionReview.response.convertedObjects",
            "[]runtime.RawExtension")
    return converted


def _expect(value, kind, field: str, go_type: str) -> None:
    """Go's JSON decoding error for a value of the wrong type."""
    if not isinstance(value, kind):
        raise ValueError(f"json: cannot unmarshal {json_kind(value)} into Go struct field "
                         f"{field} of type {go_type}")


def _checked(original: dict, converted, api_version: str, gvk: str, index) -> dict:
    """One converted object, checked and with the original's metadata restored;
    ``index`` None for a single object (upstream words the two cases apart)."""
    def fail(what: str, err: str):
        raise ConversionError(f"conversion webhook for {gvk} returned {what}: {err}")

    if not isinstance(converted, dict) or not isinstance(converted.get("kind"), str) or \
            not converted.get("kind"):
        err = (f"Object 'Kind' is missing in '{json.dumps(converted, separators=(',', ':'))}'"
               if isinstance(converted, dict) else
               f"json: cannot unmarshal {json_kind(converted)} into Go value of type "
               "map[string]interface {}")
        if index is None:
            raise ConversionError(err)
        fail(f"invalid converted object at index {index}", err)
    # Upstream counts from 1 in these messages of a list (its index moved on already).
    where = "invalid object at index 0" if index is None else \
        f"invalid converted object at index {index + 1}"
    received = _group_version(converted.get("apiVersion"))
    if received != api_version:
        fail(where, f"invalid groupVersion (expected {api_version}, received {received})")
    if converted["kind"] != original.get("kind", ""):
        fail(where, f"invalid kind (expected {original.get('kind', '')}, received "
                    f"{converted['kind']})")
    problem = _identity_change(original, converted)
    if problem:
        fail("invalid object" if index is None else
             f"invalid converted object at index {index + 1}", problem)
    try:
        _restore_object_meta(original, converted)
    except ValueError as err:
        fail("invalid metadata" if index is None else
             f"invalid metadata in object at index {index + 1}", str(err))
    return converted


def _meta_string(obj: dict, field: str) -> str:
    meta = obj.get("metadata")
    value = meta.get(field) if isinstance(meta, dict) else None
    return value if isinstance(value, str) else ""


def _identity_change(original: dict, converted: dict) -> str:
    """``validateConvertedObject``: kind, name, namespace and uid must not change."""
    if original.get("kind", "") != converted.get("kind", ""):
        return f"must have the same kind: {original.get('kind', '')} != {converted['kind']}"
    for field, label in (("name", "name"), ("namespace", "namespace"), ("uid", "UID")):
        before, after = _meta_string(original, field), _meta_string(converted, field)
        if before != after:
            return f"must have the same {label}: {before} != {after}"
    return ""


def _restore_object_meta(original: dict, converted: dict) -> None:
    """``restoreObjectMeta``: the original's metadata, with the converted labels and
    annotations (validated when they changed); ValueError as upstream words it."""
    from kapiserver.apimachinery.field_errors import FieldPath, aggregate_message
    from kapiserver.apimachinery.validation import validate_annotations, validate_labels


    if "metadata" not in converted:
        raise ValueError("missing metadata in converted object")
    answered = converted["metadata"]
    if not isinstance(answered, dict):
        raise ValueError(f"invalid metadata of type {go_type_name(answered)} in converted object")
    meta = copy.deepcopy(original["metadata"]) if "metadata" in original else {}
    if not isinstance(meta, dict):
        raise ValueError(f"invalid metadata of type {go_type_name(meta)} in input object")
    converted["metadata"] = meta
    for field in ("labels", "annotations"):
        value = answered.get(field)
        if value is None:
            meta.pop(field, None)
            continue
        if not isinstance(value, dict):
            raise ValueError(f"invalid metadata.{field} of type {go_type_name(value)} in converted "
                             "object")
        before = meta.get(field)
        if before is not None and not isinstance(before, dict):
            raise ValueError(f"invalid metadata.{field} of type {go_type_name(before)} in original "
                             "object")
        before = before or {}
        changed = len(before) != len(value)
        for key, text in value.items():
            if not isinstance(text, str):
                raise ValueError(f"metadata.{field}[{key}] must be a string, but is "
                                 f"{go_type_name(text)} in converted object")
            changed = changed or before.get(key) != text
        if changed:
            errs = (validate_labels(value, FieldPath("metadata", "labels")) if field == "labels"
                    else validate_annotations(value, FieldPath("metadata", "annotation")))
            if errs:
                raise ValueError(aggregate_message(errs))
        meta[field] = value


def _group_version(api_version) -> str:
    """``schema.ParseGroupVersion(v).String()`` ("" for what does not parse)."""
    if not isinstance(api_version, str) or api_version in ("", "/"):
        return ""
    if api_version.count("/") > 1:
        return ""
    group, _, version = api_version.rpartition("/")
    return f"{group}/{version}" if group else version


def _gvk(obj: dict) -> str:
    """``GroupVersionKind.String()`` of an object: ``group/version, Kind=kind``."""
    api_version = obj.get("apiVersion") if isinstance(obj.get("apiVersion"), str) else ""
    kind = obj.get("kind") if isinstance(obj.get("kind"), str) else ""
    if api_version.count("/") > 1:
        api_version = ""
    group, _, version = api_version.rpartition("/")
    return f"{group}/{version}, Kind={kind}"
