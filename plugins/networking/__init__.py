"""The ``networking.k8s.io`` API group: Ingresses, IngressClasses and NetworkPolicies."""
