"""Runtime: encodings of API objects (the Kubernetes protobuf envelope)."""
