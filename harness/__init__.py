"""privlab's harness: a spec-exact RISC-V hart on Unicorn, its devices, traces and tools."""

__version__ = "0.1.0"
__all__ = ["__version__"]
