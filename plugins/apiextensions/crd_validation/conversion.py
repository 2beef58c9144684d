"""A CRD's ``spec.conversion``, validated as upstream (``validateCustomResourceConversion``
and ``k8s.io/apiserver/pkg/util/webhook``'s URL, service and CA bundle checks).

Paths are the internal type's: a v1 ``spec.conversion.webhook.clientConfig`` is reported at
``spec.conversion.webhookClientConfig``, ``webhook.conversionReviewVersions`` at
``spec.conversion.conversionReviewVersions``.
"""

from __future__ import annotations

from urllib.parse import urlsplit

from kapiserver.apimachinery.field_errors import FieldError, FieldPath
from kapiserver.apimachinery.validation import is_dns1035_label, is_dns1123_subdomain, \
    is_valid_port_num

from .gosyntax import go_bytes, go_strings
from .internal import Options, as_dict, as_list, as_str

__all__ = ["validate_conversion", "ca_bundle_errors", "has_valid_review_version_or_empty"]

#: The ConversionReview versions the previous release understands.
ACCEPTED_REVIEW_VERSIONS = ("v1", "v1beta1")
_FORM = "; desired format: https://host[/path]"


def has_valid_review_version_or_empty(versions) -> bool:
    """``hasValidConversionReviewVersionOrEmpty``."""
    versions = as_list(versions)
    return not versions or any(v in ACCEPTED_REVIEW_VERSIONS for v in versions)


def _review_versions(versions, require_recognized: bool, path: FieldPath) -> list[FieldError]:
    """``validateConversionReviewVersions``."""
    versions = as_list(versions)
    if not versions:
        return [FieldError.required(path, "")]
    errs, seen, accepted = [], set(), False
    for i, version in enumerate(versions):
        version = as_str(version)
        if version in seen:
            errs.append(FieldError.invalid(path.index(i), version, "duplicate version"))
            continue
        seen.add(version)
        errs += [FieldError.invalid(path.index(i), version, msg)
                 for msg in is_dns1035_label(version)]
        accepted = accepted or version in ACCEPTED_REVIEW_VERSIONS
    if require_recognized and not accepted:
        errs.append(FieldError.invalid(path, go_strings(versions),
                                       "must include at least one of "
                                       + ", ".join(sorted(ACCEPTED_REVIEW_VERSIONS))))
    return errs


def _webhook_url(path: FieldPath, url: str) -> list[FieldError]:
    """``ValidateWebhookURL(path, url, forceHttps=true)``, with Python's URL parser."""
    try:
        parts = urlsplit(url)
        host = parts.netloc.rpartition("@")[2]
    except ValueError as err:
        return [FieldError.required(path, f'url must be a valid URL: parse "{url}": {err}'
                                          + _FORM)]
    errs = []
    scheme = parts.scheme.lower()
    if scheme != "https":
        errs.append(FieldError.invalid(path, scheme, "'https' is the only allowed URL scheme"
                                       + _FORM))
    if not host:
        errs.append(FieldError.invalid(path, host, "host must be provided" + _FORM))
    if "@" in parts.netloc:
        errs.append(FieldError.invalid(path, parts.netloc.rpartition("@")[0],
                                       "user information is not permitted in the URL"))
    if parts.fragment:
        errs.append(FieldError.invalid(path, parts.fragment,
                                       "fragments are not permitted in the URL"))
    if parts.query:
        errs.append(FieldError.invalid(path, parts.query,
                                       "query parameters are not permitted in the URL"))
    return errs


def _webhook_service(path: FieldPath, namespace: str, name: str, url_path,
                     port) -> list[FieldError]:
    """``ValidateWebhookService(path, namespace, name, path, port)``."""
    errs = []
    if not name:
        errs.append(FieldError.required(path.child("name"), "service name is required"))
    if not namespace:
        errs.append(FieldError.required(path.child("namespace"), "service namespace is required"))
    port = port if isinstance(port, int) and not isinstance(port, bool) else 0
    if msgs := is_valid_port_num(port):
        errs.append(FieldError.invalid(path.child("port"), port,
                                       "port is not valid: " + ", ".join(msgs)))
    if not isinstance(url_path, str) or url_path in ("", "/"):
        return errs
    at = path.child("path")
    if url_path == "//":
        return errs + [FieldError.invalid(at, url_path, "segment[0] may not be empty")]
    if not url_path.startswith("/"):
        errs.append(FieldError.invalid(at, url_path, "must start with a '/'"))
    rest = url_path[1:]
    if rest.endswith("/"):
        rest = rest[:-1]
    for i, step in enumerate(rest.split("/")):
        if not step:
            errs.append(FieldError.invalid(at, url_path, f"segment[{i}] may not be empty"))
            continue
        errs += [FieldError.invalid(at, url_path, f"segment[{i}]: {msg}")
                 for msg in is_dns1123_subdomain(step)]
    return errs


def ca_bundle_errors(path: FieldPath, bundle: bytes) -> list[FieldError]:
    """``ValidateCABundle``: the bundle holds at least one parsable PEM certificate."""
    error = _ca_bundle_problem(bundle)
    return [FieldError.invalid(path, go_bytes(bundle), error)] if error else []


def _ca_bundle_problem(bundle: bytes) -> str:
    # cert.ParseCertsPEM: CERTIFICATE blocks without headers; any one unparsable fails all.
    from cryptography import x509

    text = bundle.decode("latin-1")
    found = False
    begin = "-----BEGIN CERTIFICATE-----"
    end = "-----END CERTIFICATE-----"
    start = text.find(begin)
    while start >= 0:
        stop = text.find(end, start)
        if stop < 0:
            break
        block = text[start:stop + len(end)]
        if ":" not in block[len(begin):]:  # PEM headers ("Proc-Type: ...") are skipped
            try:
                x509.load_pem_x509_certificate(block.encode("latin-1"))
            except ValueError:
                return "x509: malformed certificate"
            found = True
        start = text.find(begin, stop)
    return "" if found else "data does not contain any valid RSA or ECDSA certificates"


def validate_conversion(conversion, require_recognized: bool, path: FieldPath,
                        opts: Options) -> list[FieldError]:
    """``validateCustomResourceConversion`` of the internal conversion settings."""
    if conversion is None:
        return []
    strategy = as_str(conversion.get("strategy"))
    errs = []
    if not strategy:
        errs.append(FieldError.required(path.child("strategy"), ""))
    elif strategy not in ("None", "Webhook"):
        errs.append(FieldError.not_supported(path.child("strategy"), strategy,
                                             ["None", "Webhook"]))
    config = conversion.get("webhookClientConfig")
    config_path = path.child("webhookClientConfig")
    if strategy != "Webhook":
        if config is not None:
            errs.append(FieldError.forbidden(config_path, "should not be set when strategy is "
                                                          "not set to Webhook"))
        if as_list(conversion.get("conversionReviewVersions")):
            errs.append(FieldError.forbidden(path.child("conversionReviewVersions"),
                                             "should not be set when strategy is not set to "
                                             "Webhook"))
        return errs
    if config is None:
        errs.append(FieldError.required(config_path, "required when strategy is set to Webhook"))
    else:
        url, service = config.get("url"), config.get("service")
        if (url is None) == (service is None):
            errs.append(FieldError.required(config_path,
                                            "exactly one of url or service is required"))
        elif url is not None:
            errs += _webhook_url(config_path.child("url"), as_str(url))
        else:
            service = as_dict(service)
            # upstream passes (name, namespace) to a function declared (namespace, name), so
            # a missing name is reported as a missing namespace and the other way round
            errs += _webhook_service(config_path.child("service"), as_str(service.get("name")),
                                     as_str(service.get("namespace")), service.get("path"),
                                     service.get("port"))
        bundle = config.get("caBundle")
        if bundle and not opts.allow_invalid_ca_bundle:
            errs += ca_bundle_errors(config_path.child("caBundle"), bundle)
    errs += _review_versions(conversion.get("conversionReviewVersions"), require_recognized,
                             path.child("conversionReviewVersions"))
    return errs
