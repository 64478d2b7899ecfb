"""``python -m kubegc ...``: the same as the ``kubegc`` command."""

import sys

from kubegc.cli import main

sys.exit(main())
