"""`privlab qemu`: QEMU 7.2's command line for the virt board, run on privlab.

grammar.py reads the options course Makefiles write (and refuses the rest, one line
naming the option); boot.py boots what they describe; keyboard.py makes console input
arrive as typed keys do. harness/cli/qemu_cmd.py is the command.

The grammar's names load on first use (PEP 562): every `privlab run` types its input
through keyboard.py and needs nothing else here.
"""

from __future__ import annotations

from ..lazyload import lazy_exports

TYPE_CHECKING = False
if TYPE_CHECKING:
    from .grammar import Loader, QemuLine, Refused, parse_qemu_line

__all__ = ["HELP", "Loader", "QemuLine", "Refused", "parse_qemu_line"]

# What `privlab qemu -help` prints: QEMU's layout, one option per line starting with
# it, so that a Makefile's `$(QEMU) -help | grep -q '^-gdb'` finds what it looks for.
HELP = """\
usage: privlab qemu [PRIVLAB-OPTIONS] [QEMU-OPTIONS]
QEMU 7.2's command line for -machine virt, run on privlab (see docs/moving-from-qemu.md).

-machine virt   the board (the only one)
-nographic      the console on stdin/stdout (privlab's only console)
-bios default|none|file
                default: privlab's firmware in OpenSBI's place; none: run -kernel
                from M-mode; file: an ELF, or a raw binary loaded at 0x80000000
-kernel file    an ELF, or a raw binary (at 0x80200000 after firmware, else 0x80000000)
-initrd file    the initial RAM disk, named in the device tree's /chosen
-append cmdline the device tree's bootargs
-m size         RAM: 128M (default), 256M, 1G ...
-smp n          n harts, 1 to 8 (-smp cpus=n)
-icount shift=n each instruction takes 2^n ns of guest time (privlab's clock always
                counts instructions; default 5, about QEMU's host clock's pace)
-drive file=f,if=none,format=raw,id=x[,snapshot=on]
-device virtio-blk-device,drive=x,bus=virtio-mmio-bus.0
                a raw disk on virtio-mmio slot 0
-snapshot       every drive as snapshot=on: writes kept in memory, the file unchanged
-device loader,file=f,addr=a
                f's bytes into RAM at a
-global virtio-mmio.force-legacy=true|false
                legacy (version 1) virtio-mmio transports: true by default, as QEMU 7.2
-s              shorthand for -gdb tcp::1234
-gdb tcp::port  serve gdb on 127.0.0.1:port
-S              wait for gdb before the first instruction
-serial mon:stdio
                the serial port on the terminal (as -nographic)
-monitor none   no monitor (privlab has none)
-help           this text

privlab options, before the QEMU ones:
--pmp-before-qemu7
                QEMU before 7.0's rule: with no PMP entry S and U access all memory and
                mret may return to them (the uCore course's RustSBI 0.1.1 needs it)
--dtb-before-qemu7.2
                QEMU before 7.2's device tree: the UART's node is uart@10000000, not
                serial@ (the uCore course's 2023 RustSBI-QEMU finds it by that name)
--no-known-firmware
                run the uCore course's own RustSBI (2022) and RustSBI-QEMU (2023, 2024)
                as QEMU 7.2 does; without it privlab knows them by their bytes and gives
                each the option above it needs, with a note on stderr
--max-insns n   stop after n instructions (exit 124)
--trace-out file
                write every trap and xRET (JSON Lines if file ends in .jsonl)

Anything else is refused in one line naming the option.
"""

__getattr__ = lazy_exports(__name__, globals(),
                           dict.fromkeys(("Loader", "QemuLine", "Refused", "parse_qemu_line"),
                                         "grammar"))
