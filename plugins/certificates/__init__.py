"""The ``certificates.k8s.io`` API group: CertificateSigningRequests with their status and approval."""
