"""``pods/log``, ``exec``, ``attach``, ``portforward`` and ``proxy``: what kube-apiserver
does with them (``pkg/registry/core/pod/rest``, ``pkg/kubelet/client``).

Logs, exec, attach and port forwarding are the kubelet's: the pod's node is looked up, its
address chosen by ``--kubelet-preferred-address-types`` (upstream's default order) and its
kubelet port read from ``status.daemonEndpoints``. A pod no node runs has no logs yet (204)
and cannot be exec'd, attached or forwarded to (400); a node without an address, or one
that does not exist, fails as upstream fails. Logs are read from the kubelet over HTTPS
(its certificate unverified, as upstream without ``--kubelet-certificate-authority``), and
a kubelet that cannot be reached fails with Go's dial error. exec, attach and port
forwarding need an upgraded connection (400 otherwise) dialled to the kubelet.
``proxy`` forwards to the pod's IP.
"""

from __future__ import annotations

import errno
import http.client
import ipaddress
import logging
import socket
import ssl
import urllib.parse

from flask import Response

from kapiserver import errors
from kapiserver.apimachinery.field_errors import FieldError, FieldPath, new_invalid
from kapiserver.endpoints.connect import admit_connect
from kapiserver.registry.builtin import resource_info
from kapiserver.registry.resource import ResourceSpec

log = logging.getLogger(__name__)

#: ``--kubelet-preferred-address-types`` and ``--kubelet-port`` defaults.
PREFERRED_ADDRESS_TYPES = ("Hostname", "InternalDNS", "InternalIP", "ExternalDNS", "ExternalIP")
KUBELET_PORT = 10250
#: The kubelet transport's dialer timeout.
DIAL_TIMEOUT = 30.0
CHUNK = 64 * 1024
_HOP_BY_HOP = frozenset(("connection", "keep-alive", "proxy-authenticate", "proxy-authorization",
                         "te", "trailer", "transfer-encoding", "upgrade", "host",
                         "content-length"))


def subresource_spec(name: str) -> ResourceSpec:
    """The discovery entry of ``pods/<name>``: its response kind and verbs."""
    info = resource_info("", "v1", "pods")["subresources"][name]
    return ResourceSpec(group=info["group"], version=info["version"], kind=info["kind"],
                        resource="pods", singular="", namespaced=True,
                        verbs=tuple(info["verbs"]))


def _dict(value) -> dict:
    return value if isinstance(value, dict) else {}


def _dicts(value) -> list[dict]:
    return [item for item in value if isinstance(item, dict)] if isinstance(value, list) else []


# -- Go's words for what goes wrong -------------------------------------------------------------

def join_host_port(host: str, port) -> str:
    """``net.JoinHostPort``."""
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


def dial_error(host: str, port, err: BaseException) -> str:
    """The text of Go's ``net.Dialer`` error for ``err`` (``dial tcp 10.0.0.1:10250:
    connect: connection refused``)."""
    address = join_host_port(host, port)
    if isinstance(err, socket.gaierror):
        return f"dial tcp: lookup {host}: no such host"
    if isinstance(err, (socket.timeout, TimeoutError)):
        return f"dial tcp {address}: i/o timeout"
    reasons = {errno.ECONNREFUSED: "connection refused", errno.EHOSTUNREACH: "no route to host",
               errno.ENETUNREACH: "network is unreachable",
               errno.ECONNRESET: "connection reset by peer"}
    reason = reasons.get(getattr(err, "errno", None), getattr(err, "strerror", None) or str(err))
    return f"dial tcp {address}: connect: {reason}"


def tls_error(err: BaseException) -> str:
    """The text of Go's TLS client error for a failed handshake."""
    reason = getattr(err, "reason", "") or ""
    if reason in ("WRONG_VERSION_NUMBER", "UNKNOWN_PROTOCOL", "RECORD_LAYER_FAILURE"):
        return "tls: first record does not look like a TLS handshake"
    if isinstance(err, (ConnectionResetError, BrokenPipeError)) or "EOF" in str(err):
        return "EOF"
    return f"remote error: tls: {reason.lower().replace('_', ' ') or err}"


def tls_client(sock: socket.socket, host: str) -> socket.socket:
    """``sock`` wrapped in TLS without verifying the peer (an insecure transport's);
    ``OSError`` carries Go's words for a failed handshake."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    try:
        return context.wrap_socket(sock, server_hostname=host)
    except OSError as err:
        sock.close()
        raise OSError(tls_error(err)) from None


def go_bool(values: list[str]) -> bool:
    """A query boolean as upstream's conversion reads it: anything but 0/f/false/n/no."""
    if not values:
        return False
    return values[0] != "0" and values[0].lower() not in ("f", "false", "n", "no")


def go_int(values: list[str]) -> int | None:
    if not values:
        return None
    text = values[0]
    try:
        if text.strip() != text or "_" in text:
            raise ValueError
        value = int(text, 10)
    except ValueError:
        raise errors.BadRequest(f'strconv.ParseInt: parsing "{text}": invalid syntax') from None
    if not -(1 << 63) <= value < (1 << 63):
        raise errors.BadRequest(f'strconv.ParseInt: parsing "{text}": value out of range')
    return value


# -- where a pod's kubelet is -------------------------------------------------------------------

class Kubelets:
    """Finds pods, their containers, and the kubelets of their nodes."""

    def __init__(self, server, pods):
        self.server = server
        self.pods = pods

    def pod(self, namespace: str, name: str) -> dict:
        return self.pods.get(namespace, name)

    @staticmethod
    def container(pod: dict, container: str) -> str:
        """``validateContainer``: the container named, or the pod's only one."""
        spec = _dict(pod.get("spec"))
        name = _dict(pod.get("metadata")).get("name", "")
        if not container:
            containers = _dicts(spec.get("containers"))
            if len(containers) == 1:
                return containers[0].get("name") or ""
            if not containers:
                raise errors.BadRequest(f"a container name must be specified for pod {name}")
            names = [c.get("name") or "" for key in ("initContainers", "containers",
                                                     "ephemeralContainers")
                     for c in _dicts(spec.get(key))]
            raise errors.BadRequest(f"a container name must be specified for pod {name}, "
                                    f"choose one of: [{' '.join(names)}]")
        known = {c.get("name") for key in ("initContainers", "containers", "ephemeralContainers")
                 for c in _dicts(spec.get(key))}
        if container not in known:
            raise errors.BadRequest(f"container {container} is not valid for pod {name}")
        return container

    def node(self, name: str) -> dict:
        registry = self.server.registries.get(("", "nodes"))
        if registry is None:
            raise errors.NotFound.for_object("", "nodes", name)
        return registry.get("", name)

    def location(self, node_name: str) -> tuple[str, int]:
        """``NodeConnectionInfoGetter.GetConnectionInfo``: the kubelet's host and port."""
        node = self.node(node_name)
        status = _dict(node.get("status"))
        addresses = _dicts(status.get("addresses"))
        for kind in PREFERRED_ADDRESS_TYPES:
            for address in addresses:
                if address.get("type") == kind:
                    port = _dict(_dict(status.get("daemonEndpoints")).get("kubeletEndpoint")) \
                        .get("Port")
                    port = port if isinstance(port, int) and port > 0 else KUBELET_PORT
                    return str(address.get("address") or ""), port
        known = " ".join("{%s %s}" % (a.get("type", ""), a.get("address", "")) for a in addresses)
        raise errors.Unknown(f"no preferred addresses found; known addresses: [{known}]")

    @staticmethod
    def connect(host: str, port: int, timeout: float = DIAL_TIMEOUT) -> socket.socket:
        """A TLS connection to a kubelet; ``OSError`` carries Go's dial error text."""
        try:
            sock = socket.create_connection((host, port), timeout)
        except OSError as err:
            raise OSError(dial_error(host, port, err)) from None
        return tls_client(sock, host)


# -- pods/log -------------------------------------------------------------------------------------

class LogHandler:
    """``pods/log`` (``LogREST``): the container's log, streamed from its kubelet."""

    #: What OpenAPI says of it (``GetterWithOptions``, ``StorageMetadata``).
    get_options_kind = "PodLogOptions"
    produces_mime_types = ("text/plain",)
    produces_object = "string"

    def __init__(self, kubelets: Kubelets):
        self.kubelets = kubelets
        self.spec = subresource_spec("log")
        self.verbs = self.spec.verbs

    @staticmethod
    def options(name: str, args) -> dict:
        """``PodLogOptions`` from the query, validated (``ValidatePodLogOptions``)."""
        options = {"container": args.get("container", ""),
                   "follow": go_bool(args.getlist("follow")),
                   "previous": go_bool(args.getlist("previous")),
                   "timestamps": go_bool(args.getlist("timestamps")),
                   "sinceSeconds": go_int(args.getlist("sinceSeconds")),
                   "tailLines": go_int(args.getlist("tailLines")),
                   "limitBytes": go_int(args.getlist("limitBytes")),
                   "sinceTime": args.get("sinceTime") or None,
                   "insecureSkipTLSVerifyBackend": go_bool(
                       args.getlist("insecureSkipTLSVerifyBackend"))}
        problems = []
        if options["tailLines"] is not None and options["tailLines"] < 0:
            problems.append(FieldError.invalid(FieldPath("tailLines"), options["tailLines"],
                                               "must be greater than or equal to 0"))
        if options["limitBytes"] is not None and options["limitBytes"] < 1:
            problems.append(FieldError.invalid(FieldPath("limitBytes"), options["limitBytes"],
                                               "must be greater than 0"))
        if options["sinceSeconds"] is not None and options["sinceTime"] is not None:
            problems.append(FieldError.forbidden(
                FieldPath(""), "at most one of `sinceTime` or `sinceSeconds` may be specified"))
        elif options["sinceSeconds"] is not None and options["sinceSeconds"] < 1:
            problems.append(FieldError.invalid(FieldPath("sinceSeconds"),
                                               options["sinceSeconds"], "must be greater than 0"))
        if "stream" in args:
            # PodLogsQuerySplitStreams is alpha (off) in 1.32.
            problems.append(FieldError.forbidden(FieldPath("stream"), "may not be specified"))
        if problems:
            raise new_invalid("PodLogOptions", "", name, problems)
        return options

    @staticmethod
    def query(options: dict) -> str:
        """The kubelet's query (``url.Values.Encode``: keys sorted)."""
        params = {}
        for key in ("follow", "previous", "timestamps"):
            if options[key]:
                params[key] = "true"
        for key in ("sinceSeconds", "tailLines", "limitBytes"):
            if options[key] is not None:
                params[key] = str(options[key])
        if options["sinceTime"]:
            params["sinceTime"] = options["sinceTime"]
        return urllib.parse.urlencode(sorted(params.items()))

    def serve(self, ctx):
        info = ctx.info
        if info.verb != "get":
            raise errors.MethodNotAllowed()
        options = self.options(info.name, ctx.request.args)
        pod = self.kubelets.pod(info.namespace, info.name)
        container = self.kubelets.container(pod, options["container"])
        node = _dict(pod.get("spec")).get("nodeName")
        if not node:
            # No host yet: an empty stream (upstream's nil location answers 204).
            return Response(status=204)
        host, port = self.kubelets.location(node)
        query = self.query(options)
        path = f"/containerLogs/{info.namespace}/{info.name}/{container}" + \
            (f"?{query}" if query else "")
        url = f"https://{join_host_port(host, port)}{path}"
        try:
            sock = self.kubelets.connect(host, port)
            sock.settimeout(None)  # a followed log may stay silent for long
            conn = http.client.HTTPConnection(host, port)
            conn.sock = sock
            conn.request("GET", path, headers={"Host": join_host_port(host, port)})
            response = conn.getresponse()
        except OSError as err:
            raise errors.Unknown(f'Get "{url}": {err}') from None
        except http.client.HTTPException as err:
            raise errors.Unknown(f'Get "{url}": {err}') from None
        if not 200 <= response.status <= 206:
            raise _backend_error(response, "pods/log", info.name)
        return Response(_stream(conn, response), 200, content_type="text/plain",
                        direct_passthrough=True)


def _stream(conn, response):
    try:
        while True:
            chunk = response.read1(CHUNK)
            if not chunk:
                break
            yield chunk
    except (OSError, http.client.HTTPException):
        pass
    finally:
        response.close()
        conn.close()


def _backend_error(response, resource: str, name: str) -> errors.StatusError:
    """``GenericHttpResponseChecker``: a kubelet's failure as a Status."""
    body = response.read(4 * 1024).decode("utf-8", "replace")
    response.close()
    code = response.status
    if code == 500:
        return errors.InternalError.wrap(body)
    if code == 400:
        return errors.BadRequest(body)
    return ServerResponse(code, resource, name, body)


class ServerResponse(errors.StatusError):
    """``apierrors.NewGenericServerResponse(code, "", resource, name, body, 0, false)``: a
    backend's answer with upstream's wording for its code."""

    _WORDS = {
        409: ("Conflict", "the server reported a conflict"),
        404: ("NotFound", "the server could not find the requested resource"),
        400: ("BadRequest", "the server rejected our request for an unknown reason"),
        401: ("Unauthorized", "the server has asked for the client to provide credentials"),
        405: ("MethodNotAllowed", "the server does not allow this method on the requested "
                                  "resource"),
        422: ("Invalid", "the server rejected our request due to an error in our request"),
        503: ("ServiceUnavailable", "the server is currently unable to handle the request"),
        504: ("Timeout", "the server was unable to return a response in the time allotted, but "
                         "may still be processing the request"),
        429: ("TooManyRequests", "the server has received too many requests and has asked us "
                                 "to try again later"),
    }

    def __init__(self, code: int, resource: str, name: str, body: str):
        reason, message = self._WORDS.get(code, ("", f"the server responded with the status "
                                                     f"code {code} but did not return more "
                                                     "information"))
        if code == 403:
            reason, message = "Forbidden", body
        elif code == 406:
            reason = "NotAcceptable"
            message = body if body and body != "unknown" else \
                "the server was unable to respond with a content type that the client supports"
        elif code not in self._WORDS and code >= 500:
            reason = "InternalError"
            message = (f"an error on the server ({errors.go_quote(body)}) has prevented the "
                       "request from succeeding")
        super().__init__(f"{message} ( {resource} {name})",
                         errors.status_details(name, "", resource))
        self.code = code
        self.reason = reason


# -- exec, attach, portforward --------------------------------------------------------------------

def is_upgrade_request(request) -> bool:
    """``httpstream.IsUpgradeRequest``: ``Connection: Upgrade`` (any of its values)."""
    return any("upgrade" in part.strip().lower()
               for value in request.headers.getlist("Connection") for part in value.split(","))


#: ``api.ExecStdinParam`` and friends: how the kubelet's query names the streams.
_STREAM_PARAMS = (("stdin", "input"), ("stdout", "output"), ("stderr", "error"), ("tty", "tty"))
_MAX_HEAD = 64 * 1024
_DROPPED_REQUEST_HEADERS = ("authorization", "host", "content-length", "transfer-encoding")


class StreamHandler:
    """``pods/exec``, ``pods/attach`` or ``pods/portforward`` (a ``Connecter``).

    The request must ask for an upgrade; it is dialled to the kubelet as upstream's
    ``UpgradeAwareHandler`` dials it, and a kubelet that refuses it (this server holds no
    kubelet client credentials) has its answer passed on. Relaying an upgraded stream is
    beyond this server: a kubelet that accepts one is answered 503.
    """

    #: ``upgradeableMethods``: what OpenAPI describes (a ``Connecter``).
    connect_methods = ("GET", "POST")

    def __init__(self, kubelets: Kubelets, kind: str):
        self.kubelets = kubelets
        self.kind = kind
        self.spec = subresource_spec(kind)
        self.verbs = self.spec.verbs

    def kubelet_path(self, ctx, pod: dict, container: str) -> str:
        """``streamLocation``/``PortForwardLocation``'s path and query."""
        info, args = ctx.info, ctx.request.args
        if self.kind == "portforward":
            ports = [go_int([p]) for value in args.getlist("ports") for p in value.split(",")
                     if p] if args.getlist("ports") else []
            query = [("port", ",".join(str(p) for p in ports))] if ports else []
            path = f"/portForward/{info.namespace}/{info.name}"
        else:
            query = sorted([(param, "1") for option, param in _STREAM_PARAMS
                            if go_bool(args.getlist(option))] +
                           ([("command", c) for c in args.getlist("command")]
                            if self.kind == "exec" else []), key=lambda kv: kv[0])
            path = f"/{self.kind}/{info.namespace}/{info.name}/{container}"
        return path + (f"?{urllib.parse.urlencode(query)}" if query else "")

    def serve(self, ctx):
        info = ctx.info
        if info.verb not in self.verbs:
            raise errors.MethodNotAllowed()
        admit_connect(ctx, self.spec)
        pod = self.kubelets.pod(info.namespace, info.name)
        container = ""
        if self.kind != "portforward":
            container = self.kubelets.container(pod, ctx.request.args.get("container", ""))
        if not _dict(pod.get("spec")).get("nodeName"):
            raise errors.BadRequest(f"pod {info.name} does not have a host assigned")
        host, port = self.kubelets.location(pod["spec"]["nodeName"])
        path = self.kubelet_path(ctx, pod, container)
        if not is_upgrade_request(ctx.request):
            raise errors.BadRequest("Upgrade request required")
        try:
            sock = self.kubelets.connect(host, port)
        except OSError as err:
            raise errors.Unknown(f"error dialing backend: {err}") from None
        try:
            return self.relay(ctx, sock, host, port, path)
        finally:
            sock.close()

    @staticmethod
    def relay(ctx, sock, host: str, port: int, path: str):
        """Send the upgrade request to the kubelet; pass on a refusal."""
        lines = [f"{ctx.request.method} {path} HTTP/1.1", f"Host: {join_host_port(host, port)}"]
        for key, value in ctx.headers.items():
            lowered = key.lower()
            if lowered in _DROPPED_REQUEST_HEADERS or lowered.startswith("impersonate-"):
                continue
            lines.append(f"{key}: {value}")
        forwarded = ctx.request.remote_addr
        if forwarded:
            lines.append(f"X-Forwarded-For: {forwarded}")
        sock.settimeout(DIAL_TIMEOUT)
        try:
            sock.sendall(("\r\n".join(lines) + "\r\n\r\n").encode("latin-1"))
            response = http.client.HTTPResponse(sock, method=ctx.request.method)
            response.begin()
        except (OSError, http.client.HTTPException) as err:
            raise errors.Unknown(str(err) or "unexpected EOF") from None
        if response.status == 101:
            raise errors.ServiceUnavailable(
                f"the kubelet at {join_host_port(host, port)} accepted the stream, which this "
                "server does not relay")
        if response.status < 400:
            raise errors.Unknown(f"invalid upgrade response: status code {response.status}")
        body = response.read(_MAX_HEAD)
        headers = [(k, v) for k, v in response.getheaders() if k.lower() not in _HOP_BY_HOP]
        return Response(body, response.status, headers=headers)


# -- proxy -------------------------------------------------------------------------------------

def split_scheme_name_port(value: str) -> tuple[str, str, str] | None:
    """``utilnet.SplitSchemeNamePort``: ``name``, ``name:port`` or ``scheme:name:port``."""
    parts = value.split(":")
    if len(parts) == 1:
        scheme, name, port = "", parts[0], ""
    elif len(parts) == 2:
        scheme, (name, port) = "", parts
    elif len(parts) == 3:
        scheme, name, port = parts
    else:
        return None
    if not name or scheme not in ("", "http", "https"):
        return None
    return scheme, name, port


class ProxyHandler:
    """``pods/proxy`` (``ProxyREST``): the request, forwarded to the pod's IP."""

    #: ``proxyMethods``, and the ``/{path}`` routes: what OpenAPI describes.
    connect_methods = ("GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS")
    connect_subpath = True

    def __init__(self, kubelets: Kubelets):
        self.kubelets = kubelets
        self.spec = subresource_spec("proxy")
        self.verbs = self.spec.verbs

    def serve(self, ctx):
        info = ctx.info
        admit_connect(ctx, self.spec, "/".join(info.parts[3:]))
        parsed = split_scheme_name_port(info.name)
        if parsed is None:
            raise errors.BadRequest(f"invalid pod request {errors.go_quote(info.name)}")
        scheme, name, port = parsed
        pod = self.kubelets.pod(info.namespace, name)
        spec = _dict(pod.get("spec"))
        if not port:
            for container in _dicts(spec.get("containers")):
                ports = _dicts(container.get("ports"))
                if ports:
                    port = str(ports[0].get("containerPort", ""))
                    break
        ips = _dicts(_dict(pod.get("status")).get("podIPs"))
        pod_ip = ips[0].get("ip") if ips and isinstance(ips[0].get("ip"), str) else ""
        if not _global_unicast(pod_ip):
            raise errors.BadRequest("address not allowed")
        scheme = scheme or "http"
        if not port:
            port = "443" if scheme == "https" else "80"
        path = "/" + "/".join(info.parts[3:]) if len(info.parts) > 3 else "/"
        if ctx.request.path.endswith("/") and not path.endswith("/"):
            path += "/"
        query = ctx.request.query_string.decode()
        return self.forward(ctx, scheme, pod_ip, port, path + (f"?{query}" if query else ""))

    @staticmethod
    def forward(ctx, scheme: str, host: str, port: str, path: str):
        request = ctx.request
        headers = [(k, v) for k, v in request.headers.items()
                   if k.lower() not in _HOP_BY_HOP and k.lower() != "authorization"]
        body = request.get_data() if request.method not in ("GET", "HEAD") else None
        try:
            port_number = int(port)
        except ValueError:
            raise errors.Unknown(f"dial tcp: address {host}:{port}: invalid port") from None
        try:
            sock = socket.create_connection((host, port_number), DIAL_TIMEOUT)
        except OSError as err:
            raise errors.Unknown(dial_error(host, port_number, err)) from None
        if scheme == "https":
            try:
                sock = tls_client(sock, host)
            except OSError as err:
                raise errors.Unknown(str(err)) from None
        sock.settimeout(None)  # answers may stream with long pauses
        conn = http.client.HTTPConnection(host, port_number)
        conn.sock = sock
        try:
            conn.putrequest(request.method, path, skip_accept_encoding=True)
            for key, value in headers:
                conn.putheader(key, value)
            if body is not None:
                conn.putheader("Content-Length", str(len(body)))
            conn.endheaders(body)
            response = conn.getresponse()
        except (OSError, http.client.HTTPException) as err:
            conn.close()
            raise errors.Unknown(str(err)) from None
        out = [(k, v) for k, v in response.getheaders() if k.lower() not in _HOP_BY_HOP]
        return Response(_stream(conn, response), response.status, headers=out,
                        direct_passthrough=True)


def _global_unicast(value: str) -> bool:
    """``net.IP.IsGlobalUnicast`` of a parsed pod IP."""
    from kapiserver.apimachinery.validation import parse_ip_sloppy

    ip = parse_ip_sloppy(value) if value else None
    if ip is None:
        return False
    if isinstance(ip, ipaddress.IPv4Address) and ip == ipaddress.IPv4Address("255.255.255.255"):
        return False
    return not (ip.is_unspecified or ip.is_loopback or ip.is_multicast or ip.is_link_local)
