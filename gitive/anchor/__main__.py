"""``python -m gitive.anchor``: the anchor's loop, as ``gitive anchor start`` and the user service run it."""

import sys

from gitive.anchor.runner import main

sys.exit(main())
