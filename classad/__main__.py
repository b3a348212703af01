"""``python -m classad``: the ``classad`` command."""

import sys

from classad.cli import main

if __name__ == "__main__":
    sys.exit(main())
