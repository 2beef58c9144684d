"""The ``autoscaling`` API group: HorizontalPodAutoscalers, one stored object served as v1 and v2."""
