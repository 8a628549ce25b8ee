"""The `privlab` command line."""

from harness.cli.main import main

__all__ = ["main"]
