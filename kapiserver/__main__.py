"""``python -m kapiserver``: the same as the ``kapiserver`` command."""

import sys

from .cli import main

sys.exit(main())
