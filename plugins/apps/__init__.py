"""The ``apps`` API group: Deployments, ReplicaSets, StatefulSets, DaemonSets and ControllerRevisions."""
