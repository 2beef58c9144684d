"""The hooks kapiserver publishes to plugins (pluggy project name ``kapiserver``).

Every hook is called **once, at start-up**, never per request: it returns named
factories, and the server builds plain objects from them and composes those with its own
union and chain code. Built-in plugins (``kapiserver_plugins.*``) implement these hooks
exactly as a third-party distribution does, through the ``kapiserver`` entry-point group.

pluggy calls implementations in LIFO registration order; no meaning is ever attached to
that order. Where order matters, it comes from configuration or from a documented default
that mirrors upstream, and is logged at start-up.

Hooks evolve by gaining arguments, never by losing or renaming them (pluggy lets an
implementation accept any subset of a hook's arguments).
"""

import pluggy

hookspec = pluggy.HookspecMarker("kapiserver")


@hookspec
def kapiserver_add_options(options):
    """Declare the configuration options this plugin reads.

    :param options: the ``kapiserver.options.OptionRegistry``; call
        ``options.add(name, field, help)`` with a kebab-case ``name`` (the flag is
        ``--name``, the config-file key is ``name``) and a marshmallow field that converts
        and validates the value. Names must not collide with another plugin's.
    :return: nothing.

    Called once, before the command line and the config file are parsed, so that every
    option is validated together and all errors are reported at once.
    """


@hookspec
def kapiserver_authenticators(config):
    """Return the authenticators this plugin contributes, as ``{name: factory}``.

    :param config: the validated ``kapiserver.options.Config``.
    :return: a dict mapping an authenticator name (``"x509"``, ``"tokenfile"``, …) to a
        factory ``factory(server) -> kapiserver.authentication.Authenticator``; return ``{}``
        when the options that enable this plugin's authenticators are not set.

    Order: the union consults authenticators in ``--authenticator-order`` order, by default
    upstream's (``kapiserver.authentication.union.DEFAULT_ORDER``), then unknown names
    sorted; authenticators with ``anonymous = True`` only when no other found credentials.
    The first success wins. Called once at start-up; factories run once per worker.
    """


@hookspec
def kapiserver_client_ca_files(config):
    """Return files of CA certificates whose client certificates the TLS handshake accepts.

    :param config: the validated ``kapiserver.options.Config``.
    :return: a list of paths of PEM bundles, besides the data dir's CA and
        ``--client-ca-file`` (always trusted); ``[]`` when this plugin trusts no more.

    Order: the bundles are pooled into one; their order does not matter. A certificate
    from one of them passes the handshake, nothing more: the authenticator that trusts
    those CAs verifies it again, and the others refuse it (the ``x509`` authenticator
    does, so that a front proxy's certificate never authenticates as its CN).

    Called once per start, in the process that prepares TLS before any worker exists
    (never in the workers, never per request). It may fetch CAs over the network and keep
    them under the data dir for the plugin's authenticators to read.
    """


@hookspec
def kapiserver_authorizers(config):
    """Return the authorization modes this plugin provides, as ``{mode: factory}``.

    :param config: the validated ``kapiserver.options.Config``.
    :return: a dict mapping a mode name as written in ``--authorization-mode``
        (``"AlwaysAllow"``, ``"RBAC"``, …) to ``factory(server) ->
        kapiserver.authorization.Authorizer``; ``{}`` when this plugin provides none.

    Order: ``--authorization-mode`` lists the modes to build, in order; only those are
    built. The privileged-group authorizer (``system:masters``) always runs first; the
    first ALLOW or DENY decides. Called once at start-up.
    """


@hookspec
def kapiserver_admission_plugins(config):
    """Return the admission plugins this plugin provides, as ``{name: factory}``.

    :param config: the validated ``kapiserver.options.Config``.
    :return: a dict mapping an admission plugin name (``"NamespaceLifecycle"``, …) to
        ``factory(server) -> kapiserver.admission.AdmissionPlugin``; a factory whose
        ``default_enabled`` attribute is false runs only when named in
        ``--enable-admission-plugins``. Return ``{}`` when this plugin provides none.

    Order: ``kapiserver.admission.RECOMMENDED_ORDER`` (upstream's), unknown names sorted
    before the webhook, quota and deny plugins. ``--disable-admission-plugins`` removes a
    plugin. Called once at start-up; the chain runs inside REST handlers, not as a filter.
    """


@hookspec
def kapiserver_api_groups(config):
    """Return the API groups this plugin installs, as a list of ``APIGroupInstaller``.

    :param config: the validated ``kapiserver.options.Config``.
    :return: a list of ``kapiserver.server.apigroups.APIGroupInstaller``; each names its
        group, the delegate server that serves it (``"kube"`` unless set) and an
        ``install(server)`` method returning the group's versions and resource handlers.
        Return ``[]`` when this plugin installs none.

    Order: versions are listed by each installer, preferred first; groups are ordered by
    the delegate that serves them. Two installers of the same group and version are a
    start-up error. Called once at start-up.
    """


@hookspec
def kapiserver_delegates(config):
    """Return the servers of the delegation chain this plugin provides, ``{name: factory}``.

    :param config: the validated ``kapiserver.options.Config``.
    :return: a dict mapping a delegate name (``"aggregator"``, ``"kube"``,
        ``"apiextensions"``) to ``factory(server, groups) ->
        kapiserver.server.delegation.Delegate``, where ``groups`` are the installed API
        groups whose ``delegate`` is that name. ``{}`` when this plugin provides none.

    Order: the ``delegation`` option lists the delegates in the order requests visit them
    (default: aggregator, kube, apiextensions); a request nothing serves gets 404. Filters
    wrap the chain once; delegates are called unprotected. Called once at start-up.
    """


@hookspec
def kapiserver_audit_backends(config):
    """Return the audit backends this plugin provides, as ``{name: factory}``.

    :param config: the validated ``kapiserver.options.Config``.
    :return: a dict mapping a backend name to ``factory(server) ->
        kapiserver.audit.AuditBackend``; ``{}`` when not configured.

    Order: every backend receives every event; they are called in name order. Called once
    at start-up.
    """


@hookspec
def kapiserver_controllers(config):
    """Return the controllers this plugin runs, as ``{name: factory}``.

    :param config: the validated ``kapiserver.options.Config``.
    :return: a dict mapping a controller name (``"namespace"``, …) to ``factory(server) ->
        kapiserver.controllers.Controller``; ``{}`` when this plugin runs none.

    Order: controllers run concurrently, each in its own loop; none may rely on another
    running first. Only the worker holding the controllers' Lease runs them. Called once at
    start-up; factories run once per worker.
    """
