"""Pods: the resource and its subresources (``status``, ``binding``, ``eviction``,
``ephemeralcontainers``, ``log``, ``exec``, ``attach``, ``portforward``, ``proxy``), and
``bindings``.

``strategy`` holds the pod's rules (defaults, what create and update keep, validation,
field selectors, graceful deletion's grace period), ``disabled`` what 1.32's disabled
features drop, ``table`` the printer, ``registry`` graceful deletion and ``handler`` the
DELETE that feeds it; ``binding``, ``eviction`` and ``connect`` serve the other
subresources.
"""

from .strategy import PODS, PodStrategy

STATUS_VERBS = ("get", "patch", "update")


def install(server) -> dict:
    """The handlers of pods, their subresources and ``bindings``, keyed as
    ``APIGroupInfo`` keys them."""
    # Imported here: the web layer (Flask) stays out of the gunicorn master.
    from .binding import BINDINGS, POD_BINDING, Binder, BindingHandler
    from .connect import Kubelets, LogHandler, ProxyHandler, StreamHandler
    from .eviction import EvictionHandler, Evictor
    from .handler import PodHandler
    from .registry import PodRegistry

    strategy = PodStrategy(PODS)
    main = server.rest_handler(PODS, strategy, registry_class=PodRegistry)
    pods = PodHandler(main.store, server)
    status = server.rest_handler(PODS, strategy.status_strategy(), "status", STATUS_VERBS,
                                 registry_class=PodRegistry)
    ephemeral = server.rest_handler(PODS, strategy.ephemeral_containers_strategy(),
                                    "ephemeralcontainers", STATUS_VERBS,
                                    registry_class=PodRegistry)
    binder = Binder(pods.store)
    kubelets = Kubelets(server, pods.store)
    return {
        "pods": pods,
        "pods/status": status,
        "pods/ephemeralcontainers": ephemeral,
        "pods/binding": BindingHandler(POD_BINDING, server, binder, subresource=True),
        "bindings": BindingHandler(BINDINGS, server, binder, subresource=False),
        "pods/eviction": EvictionHandler(server, Evictor(server, pods.store, status.store)),
        "pods/log": LogHandler(kubelets),
        "pods/exec": StreamHandler(kubelets, "exec"),
        "pods/attach": StreamHandler(kubelets, "attach"),
        "pods/portforward": StreamHandler(kubelets, "portforward"),
        "pods/proxy": ProxyHandler(kubelets),
    }
