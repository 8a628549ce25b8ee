"""The device tree privlab hands to the firmware (a1 at reset), written by boot/flattree.py.

Modelled on what QEMU 7.2's `virt` board generates (`-machine virt,dumpdtb=virt.dtb`),
trimmed to the devices privlab emulates, with addresses from kernel/include/platform.h:
memory, the cpus (ISA, MMU type, timebase frequency, each one's interrupt controller;
with several, QEMU's cpu-map), the
NS16550A UART (its interrupt on the PLIC), the CLINT, the PLIC (M and S external
interrupts of the cpu's controller), the sifive_test finisher (with syscon
poweroff/reboot nodes), the eight virtio-mmio transports (PLIC sources 1..8), and
`/chosen` with `bootargs`, `stdout-path` and `linux,initrd-start`/`-end`. Phandles
are QEMU's.

The kernel reads it in kernel/fdt.c (it polls the UART through SBI).
"""

from __future__ import annotations

from ..abi.csr import Irq
from ..abi.platform import PLATFORM
from ..errors import BadInput
from .flattree import Node, Prop, empty, strings, to_dtb, words

__all__ = ["build_dtb", "parse_dtb_summary"]

_UART_CLOCK_HZ = 0x384000  # QEMU's value; nothing here depends on it


def _reg(base: int, size: int) -> Prop:
    """A reg property with #address-cells = #size-cells = 2, as on QEMU virt."""
    return words("reg", base >> 32, base & 0xFFFFFFFF, size >> 32, size & 0xFFFFFFFF)


def _addr_prop(name: str, value: int) -> Prop:
    """One cell when it fits (QEMU 7.2 writes initrd bounds as cells), else two."""
    if value < 1 << 32:
        return words(name, value)
    return words(name, value >> 32, value & 0xFFFFFFFF)


class _Phandles:
    """QEMU 7.2 numbers phandles from the last cpu down: cpu N-1 is 1 and its
    interrupt controller 2, ..., cpu 0 is 2N-1 and its controller 2N; then the PLIC
    (2N+1) and the finisher (2N+2). One hart: 1, 2, 3, 4."""

    def __init__(self, harts: int) -> None:
        self.harts = harts
        self.plic = 2 * harts + 1
        self.finisher = 2 * harts + 2

    def cpu(self, hart: int) -> int:
        return 2 * (self.harts - 1 - hart) + 1

    def intc(self, hart: int) -> int:
        return self.cpu(hart) + 1

    def per_hart(self, *irqs: int) -> Prop:
        """interrupts-extended: each hart's controller with `irqs`, hart 0 first."""
        cells = [c for k in range(self.harts) for irq in irqs for c in (self.intc(k), irq)]
        return words("interrupts-extended", *cells)


# The hart's extensions as QEMU 7.2 names those of its default cpu without the
# hypervisor (`-cpu rv64,h=false`): misa's letters (but S and U, which the string leaves
# out), then the named extensions. Firmware and kernels that read the tree to learn the
# hart (Linux: F and D for its FPU state) see what the hart does. Its mmu-type is QEMU
# 7.2's too: RV64's largest scheme that tree names is Sv48 (the hart walks Sv57 as well,
# as QEMU's does; tests/conformance/vm_deeper.S).
ISA_EXTENSIONS = "imafdc_zicsr_zifencei_zihintpause_zba_zbb_zbc_zbs_sstc"


def _cpus(xlen: int, timebase_hz: int, ph: _Phandles) -> Node:
    cpus = Node("cpus", words("#address-cells", 1), words("#size-cells", 0),
                words("timebase-frequency", timebase_hz))
    for k in range(ph.harts):
        intc = Node("interrupt-controller",
                    words("#interrupt-cells", 1),
                    empty("interrupt-controller"),
                    strings("compatible", "riscv,cpu-intc"),
                    words("phandle", ph.intc(k)))
        cpu = Node(f"cpu@{k}",
                   words("phandle", ph.cpu(k)),
                   strings("device_type", "cpu"), words("reg", k),
                   strings("status", "okay"), strings("compatible", "riscv"),
                   strings("riscv,isa", f"rv{xlen}{ISA_EXTENSIONS}"),
                   strings("mmu-type", "riscv,sv48" if xlen == 64 else "riscv,sv32"))
        cpu.append(intc)
        cpus.append(cpu)
    # QEMU 7.2 lists the cpu-map for any number of harts, one included: firmware
    # counts the harts from it (RustSBI 0.1.1 assumes 7 cores without one).
    cluster = Node("cluster0")
    for k in range(ph.harts):
        cluster.append(Node(f"core{k}", words("cpu", ph.cpu(k))))
    cpu_map = Node("cpu-map")
    cpu_map.append(cluster)
    cpus.append(cpu_map)
    return cpus


def _uart_node(before_qemu72: bool) -> str:
    """The UART's node name. QEMU 7.2 renamed it from uart@ to serial@, the name the
    devicetree specification gives serial ports; firmware of the QEMU 7.0 and 7.1 years
    that looks the UART up by its node's name (RustSBI-QEMU with rustsbi 0.3.0-alpha.2,
    until its January 2023 fix) finds no UART on 7.2's tree."""
    return f"{'uart' if before_qemu72 else 'serial'}@{PLATFORM.uart0_base:x}"


def _soc(ph: _Phandles, before_qemu72: bool) -> Node:
    p = PLATFORM
    soc = Node("soc", words("#address-cells", 2), words("#size-cells", 2),
               strings("compatible", "simple-bus"), empty("ranges"))
    soc.append(Node(_uart_node(before_qemu72),
                    words("interrupts", p.uart0_irq),
                    words("interrupt-parent", ph.plic),
                    words("clock-frequency", _UART_CLOCK_HZ),
                    _reg(p.uart0_base, p.uart0_size),
                    strings("compatible", "ns16550a")))
    soc.append(Node(f"test@{p.finisher_base:x}",
                    words("phandle", ph.finisher),
                    _reg(p.finisher_base, p.finisher_size),
                    strings("compatible", "sifive,test1", "sifive,test0", "syscon")))
    soc.append(Node(f"clint@{p.clint_base:x}",
                    ph.per_hart(Irq.M_SOFTWARE, Irq.M_TIMER),
                    _reg(p.clint_base, p.clint_size),
                    strings("compatible", "sifive,clint0", "riscv,clint0")))
    soc.append(Node(f"plic@{p.plic_base:x}",
                    words("phandle", ph.plic),
                    # QEMU 7.2 counts source 0 in riscv,ndev
                    words("riscv,ndev", p.plic_num_sources),
                    _reg(p.plic_base, p.plic_size),
                    ph.per_hart(Irq.M_EXTERNAL, Irq.S_EXTERNAL),
                    empty("interrupt-controller"),
                    strings("compatible", "sifive,plic-1.0.0", "riscv,plic0"),
                    words("#address-cells", 0),
                    words("#interrupt-cells", 1)))
    _virtio(soc, ph)
    return soc


def _virtio_interrupts(slot: int, ph: _Phandles) -> list[Prop]:
    """A transport's line: PLIC source PLATFORM.virtio0_irq + slot, as QEMU 7.2's."""
    return [words("interrupts", PLATFORM.virtio0_irq + slot),
            words("interrupt-parent", ph.plic)]


def _virtio(soc: Node, ph: _Phandles) -> None:
    """QEMU 7.2 adds the transports 0..7 with fdt_add_subnode, which puts each new node
    first, so its tree lists them from the highest address down; so does this one."""
    p = PLATFORM
    for slot in reversed(range(p.virtio_count)):
        base = p.virtio_base(slot)
        soc.append(Node(f"virtio_mmio@{base:x}", *_virtio_interrupts(slot, ph),
                        _reg(base, p.virtio_stride),
                        strings("compatible", "virtio,mmio")))


def _syscon(name: str, value: int, ph: _Phandles) -> Node:
    return Node(name, words("value", value), words("offset", 0),
                words("regmap", ph.finisher),
                strings("compatible", f"syscon-{name}"))


def build_dtb(ram_base: int, ram_size: int, bootargs: str = "",
              initrd_range: tuple[int, int] | None = None, xlen: int = 64, *,
              timebase_hz: int = PLATFORM.timebase_hz, harts: int = 1,
              before_qemu72: bool = False) -> bytes:
    """A flattened device tree (DTB, version 17) describing privlab's `virt` machine
    with `harts` cpus.

    `initrd_range` is (start, end) of the initrd in RAM, end exclusive, or None.
    `before_qemu72`: the UART's node named as before QEMU 7.2 (`_uart_node`).
    """
    ph = _Phandles(harts)
    if xlen not in (32, 64):
        raise BadInput(f"xlen must be 32 or 64, not {xlen}")
    if initrd_range is not None and not (
            ram_base <= initrd_range[0] <= initrd_range[1] <= ram_base + ram_size):
        raise BadInput(f"initrd {initrd_range[0]:#x}..{initrd_range[1]:#x} is not inside RAM")
    uart = f"/soc/{_uart_node(before_qemu72)}"
    root = Node("")
    root.append(words("#address-cells", 2))
    root.append(words("#size-cells", 2))
    root.append(strings("compatible", "riscv-virtio"))
    root.append(strings("model", "riscv-virtio,qemu"))   # firmware prints it (OpenSBI, RustSBI)
    chosen = Node("chosen", strings("stdout-path", uart))
    if bootargs:  # QEMU too leaves it out when there is nothing to say
        chosen.append(strings("bootargs", bootargs))
    if initrd_range is not None:
        chosen.append(_addr_prop("linux,initrd-start", initrd_range[0]))
        chosen.append(_addr_prop("linux,initrd-end", initrd_range[1]))
    root.append(chosen)
    root.append(Node(f"memory@{ram_base:x}", strings("device_type", "memory"),
                     _reg(ram_base, ram_size)))
    root.append(_cpus(xlen, timebase_hz, ph))
    root.append(_soc(ph, before_qemu72))
    root.append(_syscon("poweroff", PLATFORM.finisher_pass, ph))
    root.append(_syscon("reboot", PLATFORM.finisher_reset, ph))
    return to_dtb(root)


def _cells(words: list[int]) -> int:
    value = 0
    for w in words:
        value = (value << 32) | w
    return value


def parse_dtb_summary(blob: bytes) -> dict[str, object]:
    """What the kernel reads from a DTB (the same fields as kernel/fdt.c), for tests and
    inspectors: ram_base, ram_size, timebase_hz, bootargs, initrd_start, initrd_end."""
    import fdt  # a reader: boot/flattree.py only writes

    tree = fdt.parse_dtb(blob)
    memory = next(n for n in tree.root.nodes if n.name.startswith("memory"))
    reg = list(memory.get_property("reg").data)
    chosen = tree.get_node("/chosen")
    out: dict[str, object] = {
        "ram_base": _cells(reg[:2]), "ram_size": _cells(reg[2:4]),
        "timebase_hz": tree.get_property("timebase-frequency", "/cpus").value,
        "bootargs": chosen.get_property("bootargs").value if chosen.exist_property("bootargs")
        else "",
    }
    for key in ("initrd-start", "initrd-end"):
        if chosen.exist_property(f"linux,{key}"):
            out[key.replace("-", "_")] = _cells(list(chosen.get_property(f"linux,{key}").data))
    return out
