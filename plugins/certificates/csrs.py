"""CertificateSigningRequests: validation (``pkg/apis/certificates/validation``), defaults and
the three strategies of ``pkg/registry/certificates/certificates`` (the object, ``status``
and ``approval``), as in 1.32.

A request is a PEM ``CERTIFICATE REQUEST`` whose signature holds; who asked (username, uid,
groups, extra) is set from the requesting user when it is created and never changes. Only
``/approval`` adds or changes the ``Approved``/``Denied`` conditions (``kubectl certificate
approve|deny``), only ``/status`` writes the certificate; neither removes an Approved,
Denied or Failed condition. Who may approve for which signer is the CertificateApproval
admission plugin's business, who may sign the CertificateSigning plugin's.
"""

from __future__ import annotations

import base64
import binascii
import re

from kapiserver.apimachinery.field_errors import FieldError, FieldPath, GoValue, go_quote
from kapiserver.apimachinery.validation import (is_dns1123_label, is_dns1123_subdomain,
                                                validate_core_object_meta,
                                                validate_core_object_meta_update)
from kapiserver.registry.builtin import builtin_spec
from kapiserver.registry.builtin_strategy import BuiltinStrategy, StatusStrategy
from kapiserver.registry.printers import age, human_duration
from kapiserver.registry.store import now_rfc3339

#: ``SelectableFields``: requests may also be selected by signer.
CSRS = builtin_spec("certificates.k8s.io", "v1", "certificatesigningrequests",
                    selectable_fields=("spec.signerName",))
LEGACY_UNKNOWN_SIGNER = "kubernetes.io/legacy-unknown"
#: ``allValidUsages``, sorted as ``sets.List`` sorts them.
USAGES = tuple(sorted((
    "signing", "digital signature", "content commitment", "key encipherment", "key agreement",
    "data encipherment", "cert sign", "crl sign", "encipher only", "decipher only", "any",
    "server auth", "client auth", "code signing", "email protection", "s/mime",
    "ipsec end system", "ipsec tunnel", "ipsec user", "timestamping", "ocsp signing",
    "microsoft sgc", "netscape sgc")))
APPROVED, DENIED, FAILED = "Approved", "Denied", "Failed"
#: Condition types whose status may only be True.
TRUE_ONLY_TYPES = (APPROVED, DENIED, FAILED)
ALL_STATUSES = ("False", "True", "Unknown")
MIN_EXPIRATION_SECONDS = 600
DNS1123_SUBDOMAIN_MAX_LENGTH = 253
DNS1123_LABEL_MAX_LENGTH = 63
_PEM = re.compile(r"-----BEGIN ([^\n-]*)-----\r?\n(.*?)-----END \1-----", re.S)


def _dict(value) -> dict:
    return value if isinstance(value, dict) else {}


def _list(value) -> list:
    return value if isinstance(value, list) else []


def _str(value) -> str:
    return value if isinstance(value, str) else ""


def decode_bytes(value) -> bytes:
    """A ``[]byte`` field as Go reads its JSON (base64); what does not decode is empty (the
    decoder refused it already)."""
    if not isinstance(value, str):
        return b""
    try:
        return base64.b64decode(value, validate=False)
    except (binascii.Error, ValueError):
        return b""


def go_bytes(data: bytes) -> GoValue:
    """A ``[]byte`` bad value as ``%#v`` prints it: ``[]byte{0x2d, 0x2d}``."""
    return GoValue("[]byte{" + ", ".join(f"0x{b:x}" for b in data) + "}")


def pem_blocks(data: bytes) -> list[tuple[str, dict, bytes]]:
    """``pem.Decode`` repeated: ``(type, headers, bytes)`` of each block, in order."""
    blocks = []
    for match in _PEM.finditer(data.decode("latin-1")):
        kind, body = match.group(1), match.group(2)
        headers = {}
        lines = body.splitlines()
        while lines and ":" in lines[0]:
            key, _, value = lines.pop(0).partition(":")
            headers[key.strip()] = value.strip()
        try:
            raw = base64.b64decode("".join(line.strip() for line in lines), validate=True)
        except (binascii.Error, ValueError):
            continue  # Go skips a block whose body is not base64
        blocks.append((kind, headers, raw))
    return blocks


def request_problem(request: bytes) -> str:
    """``validateCSR``: why the request is not a signed PKCS#10 CSR, or ""."""
    from cryptography import x509
    from cryptography.exceptions import InvalidSignature, UnsupportedAlgorithm

    blocks = pem_blocks(request)
    if not blocks or blocks[0][0] != "CERTIFICATE REQUEST":
        return "PEM block type must be CERTIFICATE REQUEST"
    try:
        csr = x509.load_der_x509_csr(blocks[0][2])
    except ValueError:
        return "x509: malformed certificate request"
    try:
        if not csr.is_signature_valid:
            return _signature_failure(csr)
    except (InvalidSignature, UnsupportedAlgorithm, ValueError):
        return _signature_failure(csr)
    return ""


def _signature_failure(csr) -> str:
    """Go's error for a signature that does not verify, by key algorithm."""
    from cryptography.hazmat.primitives.asymmetric import ec, ed25519, rsa

    try:
        key = csr.public_key()
    except (ValueError, TypeError):
        return "x509: cannot verify signature: algorithm unimplemented"
    if isinstance(key, rsa.RSAPublicKey):
        return "crypto/rsa: verification error"
    if isinstance(key, ec.EllipticCurvePublicKey):
        return "x509: ECDSA verification failure"
    if isinstance(key, ed25519.Ed25519PublicKey):
        return "x509: Ed25519 verification failure"
    return "x509: cannot verify signature: algorithm unimplemented"


def certificate_problem(data: bytes) -> str:
    """``validateCertificate``: ``status.certificate`` holds only CERTIFICATE blocks."""
    from cryptography import x509

    if not data:
        return ""
    blocks = pem_blocks(data)
    for kind, headers, raw in blocks:
        if kind != "CERTIFICATE":
            return f"only CERTIFICATE PEM blocks are allowed, found {go_quote(kind)}"
        if headers:
            return "no PEM block headers are permitted"
        try:
            x509.load_der_x509_certificate(raw)
        except ValueError:
            return "x509: malformed certificate"
    if not blocks:
        return "must contain at least one CERTIFICATE PEM block"
    return ""


def validate_signer_name(path: FieldPath, name: str) -> list[FieldError]:
    """core's ``ValidateSignerName``: ``example.com/signer-name``, at most 571 characters."""
    if not name:
        return [FieldError.required(path, "")]
    segments = name.split("/")
    if len(segments) != 2:
        return [FieldError.invalid(path, name, "must be a fully qualified domain and path of "
                                               "the form 'example.com/signer-name'")]
    domain, rest = segments
    errs = []
    if len(domain.encode()) > DNS1123_SUBDOMAIN_MAX_LENGTH:
        errs.append(FieldError.too_long(path, "", DNS1123_SUBDOMAIN_MAX_LENGTH))
    labels = domain.split(".")
    for label in labels:
        problems = is_dns1123_label(label)
        if problems:
            errs += [FieldError.invalid(path, domain, f"validating label {go_quote(label)}: "
                                                      f"{problem}") for problem in problems]
            break
    if len(labels) < 2:
        errs.append(FieldError.invalid(path, domain, "should be a domain with at least two "
                                                     "segments separated by dots"))
    for label in rest.split("."):
        problems = is_dns1123_subdomain(label)
        if problems:
            errs += [FieldError.invalid(path, rest, f"validating label {go_quote(label)}: "
                                                    f"{problem}") for problem in problems]
            break
    limit = 2 * DNS1123_SUBDOMAIN_MAX_LENGTH + DNS1123_LABEL_MAX_LENGTH + 2
    if len(name.encode()) > limit:
        errs.append(FieldError.too_long(path, "", limit))
    return errs


# -- validation ------------------------------------------------------------------------------------

class Options:
    """``certificateValidationOptions``: what an update path may do, and what stored data
    today's rules refuse but updates must keep accepting."""

    def __init__(self, new: dict, old: dict | None):
        old_spec = _dict((old or {}).get("spec"))
        old_conditions = [_dict(c) for c in _list(_dict((old or {}).get("status"))
                                                   .get("conditions"))]
        old_types = [_str(c.get("type")) for c in old_conditions]
        old_usages = [_str(u) for u in _list(old_spec.get("usages"))]
        self.allow_setting_approval_conditions = False
        self.allow_setting_certificate = False
        self.allow_both_approved_and_denied = APPROVED in old_types and DENIED in old_types
        self.allow_legacy_signer_name = old is not None and \
            old_spec.get("signerName") == LEGACY_UNKNOWN_SIGNER
        self.allow_duplicate_condition_types = len(set(old_types)) != len(old_types)
        self.allow_empty_condition_type = "" in old_types
        self.allow_unknown_usages = any(u not in USAGES for u in old_usages)
        self.allow_duplicate_usages = len(set(old_usages)) != len(old_usages)
        certificate = _certificate(new)
        self.allow_arbitrary_certificate = old is not None and (
            certificate == _certificate(old) or bool(certificate_problem(_certificate(old))))


def _certificate(obj: dict) -> bytes:
    return decode_bytes(_dict(obj.get("status")).get("certificate"))


def _validate_conditions(conditions: list, opts: Options, path: FieldPath) -> list[FieldError]:
    """``validateConditions``."""
    errs, seen = [], set()
    has_approved = has_denied = False
    for i, condition in enumerate(conditions):
        condition = _dict(condition)
        kind, status = _str(condition.get("type")), _str(condition.get("status"))
        at = path.index(i)
        if not opts.allow_empty_condition_type and not kind:
            errs.append(FieldError.required(at.child("type"), ""))
        allowed = ("True",) if kind in TRUE_ONLY_TYPES else ALL_STATUSES
        if not status:
            errs.append(FieldError.required(at.child("status"), ""))
        elif status not in allowed:
            errs.append(FieldError.not_supported(at.child("status"), status, allowed))
        if not opts.allow_both_approved_and_denied:
            if kind == APPROVED:
                has_approved = True
                if has_denied:
                    errs.append(FieldError.invalid(at.child("type"), kind, "Approved and Denied "
                                                   "conditions are mutually exclusive"))
            elif kind == DENIED:
                has_denied = True
                if has_approved:
                    errs.append(FieldError.invalid(at.child("type"), kind, "Approved and Denied "
                                                   "conditions are mutually exclusive"))
        if not opts.allow_duplicate_condition_types:
            if kind in seen:
                errs.append(FieldError.duplicate(at.child("type"), kind))
            seen.add(kind)
    return errs


def validate_csr(obj: dict, opts: Options) -> list[FieldError]:
    """``validateCertificateSigningRequest`` (any name will do)."""
    errs = validate_core_object_meta(_dict(obj.get("metadata")), False, lambda name, prefix: [])
    spec, path = _dict(obj.get("spec")), FieldPath("spec")
    request = decode_bytes(spec.get("request"))
    problem = request_problem(request)
    if problem:
        errs.append(FieldError.invalid(path.child("request"), go_bytes(request), problem))
    usages = [_str(u) for u in _list(spec.get("usages"))]
    if not usages:
        errs.append(FieldError.required(path.child("usages"), ""))
    if not opts.allow_unknown_usages:
        errs += [FieldError.not_supported(path.child("usages").index(i), usage, USAGES)
                 for i, usage in enumerate(usages) if usage not in USAGES]
    if not opts.allow_duplicate_usages:
        seen = set()
        for i, usage in enumerate(usages):
            if usage in seen:
                errs.append(FieldError.duplicate(path.child("usages").index(i), usage))
            seen.add(usage)
    signer = _str(spec.get("signerName"))
    if not opts.allow_legacy_signer_name and signer == LEGACY_UNKNOWN_SIGNER:
        errs.append(FieldError.invalid(path.child("signerName"), signer,
                                       "the legacy signerName is not allowed via this API "
                                       "version"))
    else:
        errs += validate_signer_name(path.child("signerName"), signer)
    seconds = spec.get("expirationSeconds")
    if isinstance(seconds, int) and not isinstance(seconds, bool) and \
            seconds < MIN_EXPIRATION_SECONDS:
        errs.append(FieldError.invalid(path.child("expirationSeconds"), seconds,
                                       "may not specify a duration less than 600 seconds "
                                       "(10 minutes)"))
    status = _dict(obj.get("status"))
    errs += _validate_conditions(_list(status.get("conditions")), opts,
                                 FieldPath("status", "conditions"))
    if not opts.allow_arbitrary_certificate:
        problem = certificate_problem(_certificate(obj))
        if problem:
            errs.append(FieldError.invalid(FieldPath("status", "certificate"),
                                           "<certificate data>", problem))
    return errs


def _conditions_of(obj: dict, kind: str) -> list[dict]:
    """``findConditions``."""
    return [_dict(c) for c in _list(_dict(obj.get("status")).get("conditions"))
            if _dict(c).get("type") == kind]


def _condition_diff(old: list[dict], new: list[dict]) -> str:
    """A line per changed field, as a reader of ``cmp.Diff`` would want it."""
    lines = []
    for i in range(max(len(old), len(new))):
        a = old[i] if i < len(old) else {}
        b = new[i] if i < len(new) else {}
        for key in sorted(set(a) | set(b)):
            if a.get(key) != b.get(key):
                lines.append(f"  [{i}].{key}: {go_quote(_str(a.get(key)))} -> "
                             f"{go_quote(_str(b.get(key)))}")
    return "\n".join(lines)


def validate_csr_update(new: dict, old: dict, opts: Options) -> list[FieldError]:
    """``validateCertificateSigningRequestUpdate``."""
    errs = validate_csr(new, opts)
    meta_errs = validate_core_object_meta_update(_dict(new.get("metadata")),
                                                 _dict(old.get("metadata")))
    path = FieldPath("status", "conditions")
    for kind in (APPROVED, DENIED, FAILED):
        if len(_conditions_of(new, kind)) < len(_conditions_of(old, kind)):
            errs.append(FieldError.forbidden(path, f"updates may not remove a condition of type "
                                                   f"{go_quote(kind)}"))
    if not opts.allow_setting_approval_conditions:
        for kind in (APPROVED, DENIED):
            before, after = _conditions_of(old, kind), _conditions_of(new, kind)
            if len(after) > len(before):
                errs.append(FieldError.forbidden(path, f"updates may not add a condition of "
                                                       f"type {go_quote(kind)}"))
            elif len(after) == len(before) and after != before:
                errs.append(FieldError.forbidden(path, f"updates may not modify a condition of "
                                                       f"type {go_quote(kind)}\n"
                                                       + _condition_diff(before, after)))
    certificate, old_certificate = _certificate(new), _certificate(old)
    if certificate != old_certificate:
        at = FieldPath("status", "certificate")
        if not opts.allow_setting_certificate:
            errs.append(FieldError.forbidden(at, "updates may not set certificate content"))
        elif old_certificate:
            errs.append(FieldError.forbidden(at, "updates may not modify existing certificate "
                                                 "content"))
    return errs + meta_errs


# -- strategies -----------------------------------------------------------------------------

def set_csr_defaults(obj: dict) -> None:
    """``SetDefaults_CertificateSigningRequestCondition``: a condition's status is True."""
    for condition in _list(_dict(obj.get("status")).get("conditions")):
        if isinstance(condition, dict) and not condition.get("status"):
            condition["status"] = "True"


def set_requestor(obj: dict, user) -> None:
    """``PrepareForCreate``'s user info: who asked, from the request's user."""
    spec = obj.setdefault("spec", {})
    for key in ("username", "uid", "groups", "extra"):
        spec.pop(key, None)
    if user is None:
        return
    if user.name:
        spec["username"] = user.name
    if user.uid:
        spec["uid"] = user.uid
    if user.groups:
        spec["groups"] = list(user.groups)
    if user.extra:
        spec["extra"] = {key: list(values) for key, values in user.extra.items()}


def _preserve_conditions(new: dict, old: dict, kind: str) -> None:
    """``preserveConditionInstances``: the old instances of ``kind`` stand, unless instances
    were added or removed (validation then refuses the write)."""
    new_conditions = _list(_dict(new.get("status")).get("conditions"))
    old_conditions = _list(_dict(old.get("status")).get("conditions"))
    new_at = [i for i, c in enumerate(new_conditions) if _dict(c).get("type") == kind]
    old_at = [i for i, c in enumerate(old_conditions) if _dict(c).get("type") == kind]
    if len(new_at) == len(old_at):
        for i, j in zip(new_at, old_at):
            new_conditions[i] = old_conditions[j]


def _stamp_conditions(new: dict, old: dict) -> None:
    """``populateConditionTimestamps``: lastUpdateTime now when unset; lastTransitionTime that
    of the old condition of the same type and status, else now."""
    now = now_rfc3339()
    old_conditions = [_dict(c) for c in _list(_dict(old.get("status")).get("conditions"))]
    for condition in _list(_dict(new.get("status")).get("conditions")):
        if not isinstance(condition, dict):
            continue
        if not condition.get("lastUpdateTime"):
            condition["lastUpdateTime"] = now
        if not condition.get("lastTransitionTime"):
            condition["lastTransitionTime"] = next(
                (c.get("lastTransitionTime") for c in old_conditions
                 if c.get("type") == condition.get("type")
                 and c.get("status") == condition.get("status")), None) or now


def csr_condition(obj: dict) -> str:
    """``extractCSRStatus``: Denied, Approved or Pending, then Failed and Issued."""
    kinds = {_dict(c).get("type") for c in _list(_dict(obj.get("status")).get("conditions"))}
    text = DENIED if DENIED in kinds else APPROVED if APPROVED in kinds else "Pending"
    if FAILED in kinds:
        text += ",Failed"
    if _certificate(obj):
        text += ",Issued"
    return text


class CSRStrategy(BuiltinStrategy):
    """``csrStrategy``: create clears the status and who asked (the handler then sets the
    requestor); an update changes neither spec nor status."""

    def set_defaults(self, obj):
        set_csr_defaults(obj)

    def on_create(self, obj):
        set_requestor(obj, None)
        obj.pop("status", None)

    def on_update(self, new, old):
        if "spec" in old:
            new["spec"] = old["spec"]
        else:
            new.pop("spec", None)

    def validate(self, obj):
        return validate_csr(obj, Options(obj, None))

    def validate_update(self, new, old):
        return validate_csr_update(new, old, Options(new, old))

    def prepare_status_update(self, new, old):
        # csrStatusStrategy: the spec stays; Approved and Denied conditions stand.
        super().prepare_status_update(new, old)
        _preserve_conditions(new, old, APPROVED)
        _preserve_conditions(new, old, DENIED)
        _stamp_conditions(new, old)

    def validate_status_update(self, new, old):
        opts = Options(new, old)
        opts.allow_setting_certificate = True
        return validate_csr_update(new, old, opts)

    def selectable_fields(self, obj):
        fields = super().selectable_fields(obj)
        fields["spec.signerName"] = _str(_dict(obj.get("spec")).get("signerName"))
        return fields

    def approval_strategy(self) -> StatusStrategy:
        return ApprovalStrategy(self)

    def table_cells(self, obj):
        meta, spec = _dict(obj.get("metadata")), _dict(obj.get("spec"))
        seconds = spec.get("expirationSeconds")
        duration = (human_duration(seconds) if isinstance(seconds, int)
                    and not isinstance(seconds, bool) else "<none>")
        return [meta.get("name", ""), age(meta.get("creationTimestamp")),
                _str(spec.get("signerName")) or "<none>", _str(spec.get("username")), duration,
                csr_condition(obj)]


class ApprovalStrategy(StatusStrategy):
    """``csrApprovalStrategy`` (``<csr>/approval``): only conditions change; the spec and the
    certificate stay, and so do Failed conditions."""

    def prepare_for_update(self, new, old):
        status = new.get("status")
        BuiltinStrategy.prepare_status_update(self.main, new, old)
        if isinstance(status, dict):
            old_certificate = _dict(old.get("status")).get("certificate")
            if old_certificate is None:
                status.pop("certificate", None)
            else:
                status["certificate"] = old_certificate
        _preserve_conditions(new, old, FAILED)
        _stamp_conditions(new, old)
        self.main.normalize(new)

    def validate_update(self, new, old):
        opts = Options(new, old)
        opts.allow_setting_approval_conditions = True
        return validate_csr_update(new, old, opts)
