"""Devices of the QEMU `virt` board that privlab emulates.

The names load on first use (PEP 562): a run without a drive never loads the disk
and virtio-blk models.
"""

from __future__ import annotations

from ..lazyload import lazy_exports

TYPE_CHECKING = False
if TYPE_CHECKING:
    from .base import Device, DeviceError
    from .clint import Clint
    from .disk import Drive
    from .finisher import Finisher
    from .plic import IrqLine, Plic
    from .uart import Console, ScriptedInput, StdinInput, Uart

__all__ = ["Clint", "Console", "Device", "DeviceError", "Drive", "Finisher", "IrqLine", "Plic",
           "ScriptedInput", "StdinInput", "Uart"]

_HOME = {
    **dict.fromkeys(("Device", "DeviceError"), "base"),
    "Clint": "clint",
    "Drive": "disk",
    "Finisher": "finisher",
    **dict.fromkeys(("IrqLine", "Plic"), "plic"),
    **dict.fromkeys(("Console", "ScriptedInput", "StdinInput", "Uart"), "uart"),
}

__getattr__ = lazy_exports(__name__, globals(), _HOME)
