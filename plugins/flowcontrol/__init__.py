"""The ``flowcontrol.apiserver.k8s.io`` API group: FlowSchemas and PriorityLevelConfigurations as objects."""
