"""The ``discovery.k8s.io`` API group: EndpointSlices."""
