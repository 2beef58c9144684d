"""kapiserver: a Kubernetes-compatible API server in Python."""

__version__ = "0.1.0"
