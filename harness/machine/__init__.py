"""The machine: hart, memory, devices, ELF loading and the run loop."""

from .hart import Hart
from .loader import ElfImage, Segment, load_elf
from .machine import Machine
from .memory import Memory
from .results import DataAccess, RunResult, Stop

__all__ = ["DataAccess", "ElfImage", "Hart", "Machine", "Memory", "RunResult", "Segment", "Stop",
           "load_elf"]
