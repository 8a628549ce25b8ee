"""The machine: hart, memory, devices, ELF loading and the run loop."""

from .hart import Hart
from .loader import ElfImage, Segment, load_elf
from .machine import Machine
from .results import DataAccess, RunResult, Stop
from .memory import Memory

__all__ = ["DataAccess", "ElfImage", "Hart", "Machine", "Memory", "RunResult", "Segment", "Stop",
           "load_elf"]
