"""``python -m matchmaker.cli``: the ``matchmaker`` command."""

from matchmaker.cli import main

raise SystemExit(main())
