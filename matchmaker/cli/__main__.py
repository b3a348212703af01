"""``python -m matchmaker.cli``: the ``matchmaker`` command."""

from matchmaker.cli import main

if __name__ == "__main__":
    raise SystemExit(main())
