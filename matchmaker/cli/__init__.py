"""The ``matchmaker`` command: thin argument parsing and printing over the library."""

from .commands import main

__all__ = ["main"]
