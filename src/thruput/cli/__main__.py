"""``python -m thruput.cli``: the same as the ``thruput`` command."""

import sys

from . import main

sys.exit(main())
