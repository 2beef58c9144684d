"""Resource quota: usage counted per object kind (``evaluators``), the arithmetic of
resource lists (``resources``), the ``ResourceQuota`` admission plugin (``admission``) and
the quota controller (``controller``)."""
