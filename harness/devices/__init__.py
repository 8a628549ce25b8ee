"""Devices of the QEMU `virt` board that privlab emulates."""

from .base import Device, DeviceError
from .clint import Clint
from .disk import Drive
from .finisher import Finisher
from .plic import IrqLine, Plic
from .uart import Console, ScriptedInput, StdinInput, Uart

__all__ = ["Clint", "Console", "Device", "DeviceError", "Drive", "Finisher", "IrqLine", "Plic",
           "ScriptedInput", "StdinInput", "Uart"]
