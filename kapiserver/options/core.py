"""The options the core declares, named after kube-apiserver's flags where one exists."""

from __future__ import annotations

import os

from marshmallow import ValidationError, fields, validate

from .types import (CommaList, Duration, Path, ip_address, pem_certificates, pem_private_key,
                    readable_file)

STORAGE_BACKENDS = ["sqlite", "etcd3"]


def etcd_server_url(value: str) -> None:
    """``http(s)://host:port``, as kube-apiserver's --etcd-servers takes it."""
    from urllib.parse import urlsplit

    try:
        parts = urlsplit(value)
        port = parts.port
    except ValueError:
        port, parts = None, None
    if parts is None or parts.scheme not in ("http", "https") or not parts.hostname or \
            port is None or parts.path not in ("", "/"):
        raise ValidationError(f"{value!r} is not an etcd server URL (http(s)://host:port)")


def etcd_prefix(value: str) -> None:
    if not value.startswith("/"):
        raise ValidationError(f"{value!r} must start with /")

#: The delegation chain, outermost first, as upstream builds it
#: (``cmd/kube-apiserver/app/server.go``: aggregator → kube → apiextensions → 404).
DEFAULT_DELEGATION = ["aggregator", "kube", "apiextensions"]
LOG_LEVELS = ["debug", "info", "warning", "error", "critical"]


def add_core_options(options) -> None:
    """Declare the core's options on ``options`` (an ``OptionRegistry``)."""
    add = options.add
    add("data-dir", Path(load_default=lambda: os.path.abspath(".kapiserver")),
        "directory holding the server's state and generated certificates")
    add("bind-address", fields.String(load_default="127.0.0.1", validate=ip_address),
        "IP address to serve HTTPS on")
    add("secure-port", fields.Integer(load_default=6443, strict=False,
                                      validate=validate.Range(1, 65535)),
        "port to serve HTTPS on")
    add("tls-cert-file", Path(load_default="", validate=pem_certificates),
        "serving certificate (PEM, may include intermediates); generated when unset")
    add("tls-private-key-file", Path(load_default="", validate=pem_private_key),
        "private key of --tls-cert-file (PEM)")
    add("tls-sans", CommaList(fields.String(), load_default=list),
        "extra DNS names and IPs for the generated serving certificate")
    add("client-ca-file", Path(load_default="", validate=pem_certificates),
        "CA bundle whose client certificates authenticate (CN=user, O=groups); "
        "the data dir's own CA is always trusted too, for admin.kubeconfig")
    add("authorization-mode", CommaList(fields.String(), load_default=lambda: ["AlwaysAllow"],
                                        validate=validate.Length(min=1)),
        "ordered list of authorization modes (after the system:masters group)")
    add("authenticator-order", CommaList(fields.String(), load_default=list),
        "order in which authenticators are consulted (default: upstream's)")
    add("enable-admission-plugins", CommaList(fields.String(), load_default=list),
        "admission plugins to enable besides the default-on ones")
    add("disable-admission-plugins", CommaList(fields.String(), load_default=list),
        "admission plugins to disable, even default-on ones")
    add("admission-control-config-file", Path(load_default="", validate=readable_file),
        "an AdmissionConfiguration (apiserver.config.k8s.io/v1) giving admission plugins "
        "their configuration (PodSecurity's defaults and exemptions, …)")
    add("delegation", CommaList(fields.String(), load_default=lambda: list(DEFAULT_DELEGATION),
                                validate=validate.Length(min=1)),
        "delegate servers, in the order requests visit them")
    add("controllers", CommaList(fields.String(), load_default=lambda: ["*"]),
        "controllers to run in the server, as kube-controller-manager's flag: '*' every "
        "one on by default, 'foo' enables foo, '-foo' disables foo; empty runs none (when "
        "a kube-controller-manager runs against this server)")
    add("plugin", CommaList(fields.String(), load_default=list),
        "extra plugin modules to load by import name (besides installed entry points)")
    add("workers", fields.Integer(load_default=2, strict=False, validate=validate.Range(1, 64)),
        "gunicorn worker processes")
    add("worker-connections", fields.Integer(load_default=10000, strict=False,
                                             validate=validate.Range(1, 1_000_000)),
        "simultaneous connections (open watches included) each worker holds")
    add("max-requests-inflight", fields.Integer(load_default=400, strict=False,
                                                validate=validate.Range(0)),
        "non-mutating requests served at once, across workers; 0 = unlimited")
    add("max-mutating-requests-inflight", fields.Integer(load_default=200, strict=False,
                                                         validate=validate.Range(0)),
        "mutating requests served at once, across workers; 0 = unlimited")
    add("enable-priority-and-fairness", fields.Boolean(load_default=True),
        "API Priority and Fairness: classify requests by FlowSchema and queue them fairly "
        "within their priority level's share of --max-requests-inflight + "
        "--max-mutating-requests-inflight; false: those two limits apply as they are "
        "(max-in-flight)")
    add("request-timeout", Duration(load_default=60.0),
        "how long a request that is not long-running (watch, proxy, exec, logs) may take; "
        "a request's timeout parameter may only shorten it")
    add("shutdown-grace-period", fields.Float(load_default=30.0,
                                              validate=validate.Range(0, 3600)),
        "seconds in-flight requests get to finish after SIGTERM")
    add("etcd-compaction-interval", Duration(load_default=300.0),
        "how often the server compacts its storage, keeping one interval of history "
        "(Go duration, e.g. 5m, 30s; 0 disables)")
    add("storage-backend", fields.String(load_default="sqlite",
                                         validate=validate.OneOf(STORAGE_BACKENDS)),
        "where objects are stored: sqlite (one file in the data dir, one host) or etcd3 "
        "(an etcd v3 cluster shared by several instances; needs pip install "
        "'kapiserver[etcd]')")
    add("sqlite-synchronous", fields.String(load_default="full",
                                            validate=validate.OneOf(("full", "normal"))),
        "with --storage-backend sqlite: full fsyncs every commit before the write is "
        "acknowledged (concurrent writes share commits), as etcd does; normal does not: "
        "a write survives kill -9 but an OS crash or power loss may lose the last ones")
    add("etcd-servers", CommaList(fields.String(validate=etcd_server_url), load_default=list),
        "etcd servers to connect with (scheme://ip:port), comma separated; with "
        "--storage-backend etcd3")
    add("etcd-prefix", fields.String(load_default="/registry", validate=etcd_prefix),
        "the prefix of every key in etcd (kapiserver's /registry root is replaced by it)")
    add("etcd-cafile", Path(load_default="", validate=pem_certificates),
        "CA bundle that verifies the etcd servers' certificates (TLS)")
    add("etcd-certfile", Path(load_default="", validate=pem_certificates),
        "client certificate kapiserver presents to etcd (TLS with client certificates)")
    add("etcd-keyfile", Path(load_default="", validate=pem_private_key),
        "private key of --etcd-certfile")
    add("etcd-healthcheck-timeout", Duration(load_default=2.0),
        "how long the etcd health check (/livez, /healthz and /readyz 'etcd') waits for "
        "a quorum read")
    add("lease-reuse-duration-seconds", fields.Integer(load_default=60, strict=False,
                                                       validate=validate.Range(1)),
        "seconds each etcd lease is reused by writes with a TTL (events): fewer leases "
        "at the price of keys living up to this much (or a twentieth of their TTL) longer")
    add("log-level", fields.String(load_default="info", validate=validate.OneOf(LOG_LEVELS)),
        "logging level")
    from ..audit.options import add_audit_options

    add_audit_options(options)


def check_storage(config) -> list[str]:
    """--storage-backend etcd3 needs --etcd-servers and the etcd client; the TLS files
    come as a pair; etcd options without the etcd3 backend are refused (they would do
    nothing)."""
    errors = []
    etcd_options = sorted(name for name in config.given
                          if name.startswith("etcd-") and name != "etcd-compaction-interval")
    if config.storage_backend != "etcd3":
        if etcd_options:
            errors.append(f"--{etcd_options[0]}: only applies with --storage-backend etcd3 "
                          f"(the storage backend is {config.storage_backend})")
        return errors
    if not config.etcd_servers:
        errors.append("--etcd-servers: required with --storage-backend etcd3")
    if bool(config.etcd_certfile) != bool(config.etcd_keyfile):
        missing = "--etcd-keyfile" if config.etcd_certfile else "--etcd-certfile"
        given = "--etcd-certfile" if config.etcd_certfile else "--etcd-keyfile"
        errors.append(f"{missing}: required when {given} is set")
    schemes = {server.split("://", 1)[0] for server in config.etcd_servers}
    if len(schemes) > 1:
        errors.append("--etcd-servers: mixes http and https servers")
    if (config.etcd_cafile or config.etcd_certfile) and schemes == {"http"}:
        errors.append("--etcd-cafile: TLS files given but --etcd-servers are http:// URLs")
    try:
        import grpc  # noqa: F401
        import pyetcd  # noqa: F401
    except ImportError:
        errors.append("--storage-backend: etcd3 needs the etcd client: "
                      "pip install 'kapiserver[etcd]'")
    return errors


def check_tls_pair(config) -> list[str]:
    """Both of --tls-cert-file and --tls-private-key-file, or neither; the key must match."""
    cert, key = config.tls_cert_file, config.tls_private_key_file
    if ("tls-cert-file" in config.given and not cert) or (
            "tls-private-key-file" in config.given and not key):
        return []  # an invalid file was reported already
    if bool(cert) != bool(key):
        missing = "--tls-private-key-file" if cert else "--tls-cert-file"
        given = "--tls-cert-file" if cert else "--tls-private-key-file"
        return [f"{missing}: required when {given} is set"]
    if not cert:
        return []
    from OpenSSL import SSL

    context = SSL.Context(SSL.TLS_SERVER_METHOD)
    try:
        context.use_certificate_chain_file(cert)
        context.use_privatekey_file(key)
        context.check_privatekey()
    except SSL.Error:
        return [f"--tls-private-key-file: {key} does not match the certificate in {cert}"]
    return []
