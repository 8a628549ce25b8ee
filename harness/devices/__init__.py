"""Devices of the QEMU `virt` board that privlab emulates."""

from harness.devices.base import Device, DeviceError
from harness.devices.clint import Clint
from harness.devices.disk import Drive
from harness.devices.finisher import Finisher
from harness.devices.plic import IrqLine, Plic
from harness.devices.uart import Console, ScriptedInput, StdinInput, Uart

__all__ = ["Clint", "Console", "Device", "DeviceError", "Drive", "Finisher", "IrqLine", "Plic",
           "ScriptedInput", "StdinInput", "Uart"]
