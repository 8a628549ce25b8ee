from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Callable

import pytest

from gdb.helpers import GDB, serve
from privlab.abi.csr import Csr
from privlab.gdb.stub import Stub
from privlab.gdb.target import CSR_BASE, PC_REGNUM, PRIV_REGNUM, TargetDescription
from privlab.machine import Machine

REQUIRED = ("mstatus", "mcause", "mepc", "mtval", "mtvec", "mie", "mip", "medeleg",
            "mideleg", "sstatus", "scause", "sepc", "stval", "stvec", "satp", "sscratch",
            "mscratch")


def features(xml: str) -> dict[str, list[ET.Element]]:
    root = ET.fromstring(xml.split("\n", 2)[2])  # past the XML and DOCTYPE lines
    return {f.attrib["name"]: f.findall("reg") for f in root.findall("feature")}


@pytest.mark.parametrize("xlen", [32, 64])
def test_description_has_cpu_csr_and_virtual_features_from_the_machine(xlen: int) -> None:
    m = Machine(xlen)
    try:
        t = TargetDescription(xlen, lambda n: _has(m, n))
    finally:
        m.close()
    feats = features(t.xml())
    cpu = [r.attrib["name"] for r in feats["org.gnu.gdb.riscv.cpu"]]
    assert cpu[:2] == ["zero", "ra"] and cpu[-1] == "pc" and len(cpu) == 33
    csrs = {r.attrib["name"]: int(r.attrib["regnum"]) for r in feats["org.gnu.gdb.riscv.csr"]}
    for name in REQUIRED:
        assert csrs[name] == CSR_BASE + int(Csr[name.upper()])
    assert [r.attrib["name"] for r in feats["org.gnu.gdb.riscv.virtual"]] == ["priv"]
    bits = {r.attrib["bitsize"] for regs in feats.values() for r in regs}
    assert bits == {str(xlen)}
    assert ("cycleh" in csrs) == (xlen == 32)


def _has(m: Machine, n: int) -> bool:
    try:
        m.hart.csr(n)
    except KeyError:
        return False
    return True


def test_csr_fields_become_gdb_flags_inside_the_register() -> None:
    t = TargetDescription(64, lambda n: True)
    root = ET.fromstring(t.xml().split("\n", 2)[2])
    flags = {f.attrib["id"]: f for f in root.iter("flags")}
    spp = next(f for f in flags["sstatus_bits"] if f.attrib["name"] == "SPP")
    assert (spp.attrib["start"], spp.attrib["end"]) == ("8", "8")
    for f in flags.values():
        for field in f:
            assert 0 <= int(field.attrib["start"]) <= int(field.attrib["end"]) < 64


def test_register_numbers_are_unique_and_follow_gdb_numbering() -> None:
    t = TargetDescription(64, lambda n: True)
    nums = [r.regnum for r in t.registers]
    assert len(nums) == len(set(nums))
    assert t.by_name["pc"].regnum == PC_REGNUM
    assert t.by_name["priv"].regnum == PRIV_REGNUM
    assert [r.name for r in t.g_registers][-1] == "pc"


def test_unimplemented_csrs_are_left_out() -> None:
    t = TargetDescription(64, lambda n: n != Csr.SATP)
    assert "satp" not in t.by_name and "sstatus" in t.by_name


@pytest.mark.skipif(GDB is None, reason="gdb-multiarch is not installed")
def test_gdb_accepts_the_rv32_description(gdb_bare: Callable[[int, list[str]], str]) -> None:
    m = Machine(32)
    s = serve(m)
    try:
        out = gdb_bare(s.port, ["set architecture riscv:rv32", "p/x $pc", "p $priv",
                                "p/x $mstatus", "p/x $misa", "kill"])
    finally:
        s.server.quit()
        s.thread.join(30)
        m.close()
    assert "$1 = 0x80000000" in out
    assert "$2 = 3" in out or "prv:3" in out
    assert "$4 = 0x40" in out   # MXL=1 (32-bit) in misa's top bits


@pytest.mark.parametrize("xlen", [32, 64])
def test_floating_point_csrs_are_not_described(xlen: int) -> None:
    # There are no f registers in the description, and with mstatus.FS off the hart
    # reads fflags, frm and fcsr as whatever was on the host's stack: gdb showed
    # 'fcsr 0x7fc044afcaf0' in `info all-registers`.
    m = Machine(xlen)
    try:
        names = Stub(m).target.by_name
    finally:
        m.close()
    assert not {"fflags", "frm", "fcsr"} & set(names)
    assert "mstatus" in names


@pytest.mark.skipif(GDB is None, reason="gdb-multiarch is not installed")
@pytest.mark.parametrize("xlen", [32, 64])
def test_csrs_without_fields_print_as_unsigned_numbers(
        gdb_bare: Callable[[int, list[str]], str], xlen: int) -> None:
    # An interrupt's mcause has the top bit set, mscratch often holds a RAM address
    # (0x80000000 and up): neither is a negative number.
    m = Machine(xlen)
    s = serve(m)
    try:
        out = gdb_bare(s.port, [f"set architecture riscv:rv{xlen}", "set $mscratch = -1",
                                "p $mscratch", "p $mscratch > 0", "kill"])
    finally:
        s.server.quit()
        s.thread.join(30)
        m.close()
    assert f"$1 = {(1 << xlen) - 1}" in out and "$2 = 1" in out, out
