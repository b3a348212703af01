"""``python -m matchmaker``: the ``matchmaker`` command."""

import sys

from matchmaker.cli import main

if __name__ == "__main__":
    sys.exit(main())
