"""Admission of ``CONNECT`` requests: ``pods/exec``, ``attach``, ``portforward`` and the
proxies (upstream's ``ConnectResource`` handler admits before connecting).

The object admission sees is the request's connect options, decoded from its query as
upstream's parameter codec decodes them (``PodExecOptions``, ``PodAttachOptions``,
``PodPortForwardOptions``, ``PodProxyOptions``, ``NodeProxyOptions``,
``ServiceProxyOptions``, fields in their Go order, ``omitempty`` ones left out); its kind
is the subresource's.
"""

from __future__ import annotations

from ..admission import CONNECT
from .handlers import AdmissionAttributes

_STREAMS = ("stdin", "stdout", "stderr", "tty")


def _bool(values: list[str]) -> bool:
    # upstream's query conversion: anything but 0/f/false/n/no is true
    return bool(values) and values[0] != "0" and values[0].lower() not in (
        "f", "false", "n", "no")


def connect_options(kind: str, args, subpath: str = "") -> dict:
    """The options object of a connect request of ``kind`` from its query ``args``;
    ``subpath`` is a proxy request's path below ``proxy/``."""
    options = {"kind": kind, "apiVersion": "v1"}
    if kind in ("PodExecOptions", "PodAttachOptions"):
        for name in _STREAMS:
            if _bool(args.getlist(name)):
                options[name] = True
        if args.get("container"):
            options["container"] = args["container"]
        if kind == "PodExecOptions" and args.getlist("command"):
            options["command"] = args.getlist("command")
    elif kind == "PodPortForwardOptions":
        ports = []
        for value in args.getlist("ports"):
            for text in value.split(","):
                try:
                    ports.append(int(text))
                except ValueError:
                    continue
        if ports:
            options["ports"] = ports
    else:
        path = subpath or args.get("path", "")
        if path:
            options["path"] = path
    return options


def admit_connect(ctx, spec, subpath: str = "") -> None:
    """Run the admission chain on a connect request to ``spec``'s subresource (its kind
    names the options)."""
    info = ctx.info
    options = connect_options(spec.kind, ctx.request.args, subpath)
    attributes = AdmissionAttributes(CONNECT, options, None, ctx, spec, info.name, False)
    chain = ctx.server.admission
    chain.admit(attributes)
    chain.validate(attributes)
