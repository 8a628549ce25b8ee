"""Devices of the QEMU `virt` board that privlab emulates."""

from harness.devices.base import Device, DeviceError
from harness.devices.clint import Clint
from harness.devices.disk import Drive
from harness.devices.finisher import Finisher
from harness.devices.uart import Console, ScriptedInput, StdinInput, Uart

__all__ = ["Clint", "Console", "Device", "DeviceError", "Drive", "Finisher", "ScriptedInput",
           "StdinInput", "Uart"]
