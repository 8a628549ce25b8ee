"""privlab: a spec-exact RISC-V hart on Unicorn, its devices, traces and tools.

The repository keeps the package in harness/; pyproject.toml installs it as `privlab`,
the one top-level name (modules inside it import each other relatively)."""

__version__ = "0.1.0"
__all__ = ["__version__"]
