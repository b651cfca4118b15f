"""``python -m recframe``: the same command as the ``recframe`` script (see :mod:`recframe.cli`)."""

import sys

from recframe.cli import main

if __name__ == "__main__":
    sys.exit(main())
