"""The ``admissionregistration.k8s.io`` API group: webhook configurations and ValidatingAdmissionPolicies as objects."""
