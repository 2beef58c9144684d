"""ComponentStatuses: read-only, answered as kube-apiserver answers them."""


def install(server) -> dict:
    """The handlers of this module's resources, keyed as ``APIGroupInfo`` keys them."""
    return {}
