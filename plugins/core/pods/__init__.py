"""Pods: the resource and its subresources (``status``, ``binding``, ``eviction``,
``ephemeralcontainers``, ``log``, ``exec``, ``attach``, ``portforward``, ``proxy``), and
``bindings``."""


def install(server) -> dict:
    """The handlers of pods, their subresources and ``bindings``, keyed as
    ``APIGroupInfo`` keys them."""
    return {}
