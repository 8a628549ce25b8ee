"""The machine: hart, memory, devices, ELF loading and the run loop."""

from harness.machine.hart import Hart
from harness.machine.loader import ElfImage, Segment, load_elf
from harness.machine.machine import DataAccess, Machine, RunResult, Stop
from harness.machine.memory import Memory

__all__ = ["DataAccess", "ElfImage", "Hart", "Machine", "Memory", "RunResult", "Segment", "Stop",
           "load_elf"]
