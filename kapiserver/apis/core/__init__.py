"""The core group's shared types: pod specs and pod templates, their defaults
(``defaults``) and validation (``validation``), as every workload kind embeds them."""
