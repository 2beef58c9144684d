"""A plugin used by the tests: it implements every hook so each can be seen working.

* options ``--probe-post-start-delay``, ``--probe-audit-file`` and
  ``--probe-client-ca-file`` (a CA the TLS handshake accepts, which no authenticator trusts);
* authenticator ``probe`` (header ``X-Probe-User``), authorization mode ``ProbeDenyBob``;
* admission plugin ``ProbeAdmission`` (off by default), audit backend ``probe-file``;
* API group ``probe.kapiserver.test/v1`` with resources ``echoes`` (answers with the
  request's RequestInfo and user), ``panics`` (raises), ``blocks`` (waits for
  ``releases``) and ``streams`` (a long-running chunked answer ending at shutdown);
* delegate ``probe-first`` that answers ``/probe-delegate`` (to test ``--delegation``).
"""

from __future__ import annotations

import json
import os
import threading
import time

from flask import Response
from marshmallow import fields

from kapiserver.admission import AdmissionPlugin
from kapiserver.audit import AuditBackend
from kapiserver.authentication import Authenticator, UserInfo
from kapiserver.authorization import Authorizer, Decision
from kapiserver.controllers import Controller
from kapiserver.plugin_manager import hookimpl
from kapiserver.server.apigroups import APIGroupInfo, APIGroupInstaller, ResourceHandler
from kapiserver.server.delegation import Delegate

GROUP = "probe.kapiserver.test"


@hookimpl
def kapiserver_add_options(options):
    options.add("probe-post-start-delay", fields.Float(load_default=0.0),
                "seconds the probe post-start hook takes")
    options.add("probe-audit-file", fields.String(load_default=""),
                "file the probe audit backend appends events to")
    options.add("probe-install-delay", fields.Float(load_default=0.0),
                "seconds installing the probe API group takes (a slow worker boot)")
    options.add("probe-controller-file", fields.String(load_default=""),
                "file the probe controller appends its process id to at every sync")
    options.add("probe-client-ca-file", fields.String(load_default=""),
                "CA bundle added to the TLS handshake's (kapiserver_client_ca_files)")


@hookimpl
def kapiserver_client_ca_files(config):
    return [config.probe_client_ca_file] if config.probe_client_ca_file else []


class HeaderAuthenticator(Authenticator):
    name = "probe"

    def authenticate(self, request):
        user = request.headers.get("X-Probe-User")
        return UserInfo(user, "probe-uid", ("probers",)) if user else None


@hookimpl
def kapiserver_authenticators(config):
    return {"probe": lambda server: HeaderAuthenticator()}


class DenyBob(Authorizer):
    name = "ProbeDenyBob"

    def authorize(self, attributes):
        if attributes.user.name == "bob":
            return Decision.DENY, "bob is never allowed"
        return Decision.NO_OPINION, ""


@hookimpl
def kapiserver_authorizers(config):
    return {"ProbeDenyBob": lambda server: DenyBob()}


class ProbeAdmission(AdmissionPlugin):
    default_enabled = False

    def __init__(self, server):
        self.server = server


@hookimpl
def kapiserver_admission_plugins(config):
    return {"ProbeAdmission": ProbeAdmission}


class FileAudit(AuditBackend):
    name = "probe-file"

    def __init__(self, path):
        self.path = path

    def process_event(self, event):
        with open(self.path, "a") as f:
            f.write(json.dumps(event) + "\n")


@hookimpl
def kapiserver_audit_backends(config):
    if not config.probe_audit_file:
        return {}
    return {"probe-file": lambda server: FileAudit(server.config.probe_audit_file)}


def _json(obj, code=200):
    return Response(json.dumps(obj), code, content_type="application/json")


class Echo(ResourceHandler):
    """The request as the server saw it; ``?size=N`` pads the answer with N bytes."""

    def serve(self, ctx):
        info = ctx.info
        size = min(int(ctx.request.args.get("size", 0)), 64 << 20)
        return _json({
            **({"padding": "x" * size} if size else {}),
            "verb": info.verb, "namespace": info.namespace, "resource": info.resource,
            "subresource": info.subresource, "name": info.name,
            "user": {"name": ctx.user.name, "uid": ctx.user.uid, "groups": list(ctx.user.groups),
                     "extra": {k: list(v) for k, v in ctx.user.extra.items()}},
            "authenticatedUser": ctx.authenticated_user.name,
            "admission": [p.name for p in ctx.server.admission.plugins],
        })


class Panic(ResourceHandler):
    def serve(self, ctx):
        raise RuntimeError("probe panic")


class Blocker(ResourceHandler):
    """``blocks`` waits until ``releases`` is called (same worker) or ``?seconds=`` pass."""

    def __init__(self):
        self.release = threading.Event()

    def serve(self, ctx):
        self.release.clear()
        self.release.wait(min(float(ctx.request.args.get("seconds", 20)), 20))
        return _json({"released": self.release.is_set()})


class Releaser(ResourceHandler):
    def __init__(self, blocker):
        self.blocker = blocker

    def serve(self, ctx):
        self.blocker.release.set()
        return _json({"ok": True})


class Stream(ResourceHandler):
    """A long-running answer (verb ``watch``): a line every 0.1 s until the server stops."""

    def serve(self, ctx):
        stopping = ctx.server.stopping

        def lines():
            count = 0
            while not stopping.wait(0.1) and count < 600:
                count += 1
                yield json.dumps({"type": "TICK", "n": count}) + "\n"
            yield json.dumps({"type": "END", "n": count}) + "\n"

        return Response(lines(), 200, content_type="application/json")


class ProbeGroup(APIGroupInstaller):
    group = GROUP

    def install(self, server):
        time.sleep(server.config.probe_install_delay)
        delay = server.config.probe_post_start_delay
        server.add_post_start_hook("probe-slow", lambda s: time.sleep(delay))
        blocker = Blocker()
        return APIGroupInfo(GROUP, {"v1": {
            "echoes": Echo(), "echoes/status": Echo(), "panics": Panic(),
            "blocks": blocker, "releases": Releaser(blocker), "streams": Stream(),
        }})


@hookimpl
def kapiserver_api_groups(config):
    return [ProbeGroup()]


class FirstDelegate(Delegate):
    name = "probe-first"

    def __init__(self, server, groups):
        pass

    def serve(self, ctx):
        if ctx.request.path == "/probe-delegate":
            return Response("served by probe-first\n", 200, content_type="text/plain")
        return None


@hookimpl
def kapiserver_delegates(config):
    return {"probe-first": FirstDelegate}


class PidController(Controller):
    """Appends the pid of the worker running it: shows that exactly one worker leads."""

    name = "probe-pid"
    interval = 0.1

    def __init__(self, path):
        self.path = path

    def sync(self):
        with open(self.path, "a") as f:
            f.write(f"{os.getpid()}\n")


@hookimpl
def kapiserver_controllers(config):
    if not config.probe_controller_file:
        return {}
    return {"probe-pid": lambda server: PidController(server.config.probe_controller_file)}
