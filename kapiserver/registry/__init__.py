"""Registry: resources, their strategies and the generic store that persists them.

Mirrors ``k8s.io/apiserver/pkg/registry``: a ``Strategy`` says how one kind is defaulted,
validated and presented; the generic ``RegistryStore`` turns REST verbs into storage
operations with upstream's metadata semantics. Plain Python: no web framework here.
"""
