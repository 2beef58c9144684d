"""A CRD's ``spec.conversion``, validated as upstream (``validateCustomResourceConversion``
and ``k8s.io/apiserver/pkg/util/webhook``'s URL, service and CA bundle checks).

Paths are the internal type's: a v1 ``spec.conversion.webhook.clientConfig`` is reported at
``spec.conversion.webhookClientConfig``, ``webhook.conversionReviewVersions`` at
``spec.conversion.conversionReviewVersions``.
"""

from __future__ import annotations

from kapiserver.apimachinery.field_errors import FieldError, FieldPath
from kapiserver.apimachinery.validation import is_dns1035_label
from kapiserver.apimachinery.webhook_validation import validate_webhook_service, \
    validate_webhook_url

from .gosyntax import go_bytes, go_strings
from .internal import Options, as_dict, as_list, as_str

__all__ = ["validate_conversion", "ca_bundle_errors", "has_valid_review_version_or_empty"]

#: The ConversionReview versions the previous release understands.
ACCEPTED_REVIEW_VERSIONS = ("v1", "v1beta1")


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
            errs += validate_webhook_url(config_path.child("url"), as_str(url))
        else:
            service = as_dict(service)
            # upstream passes (name, namespace) to a function declared (namespace, name), so
            # a missing name is reported as a missing namespace and the other way round
            errs += validate_webhook_service(config_path.child("service"), as_str(service.get("name")),
                                     as_str(service.get("namespace")), service.get("path"),
                                     service.get("port"))
        bundle = config.get("caBundle")
        if bundle and not opts.allow_invalid_ca_bundle:
            errs += ca_bundle_errors(config_path.child("caBundle"), bundle)
    errs += _review_versions(conversion.get("conversionReviewVersions"), require_recognized,
                             path.child("conversionReviewVersions"))
    return errs
