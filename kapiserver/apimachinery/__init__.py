"""API machinery: selectors, validation and object metadata helpers (plain Python)."""
