"""The ``node.k8s.io`` API group: RuntimeClasses."""
