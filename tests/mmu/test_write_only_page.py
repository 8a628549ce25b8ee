"""A live W-without-R page (mmap(PROT_WRITE), userland/lab_mmap.c writeonly): the
walker reports the reserved encoding as the fault, for loads and stores alike, the
views render it, and a debugger read says why it cannot read the page."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest
from rich.console import RenderableType
from rich.text import Text

from privlab.abi.csr import Exc, Priv
from privlab.api import Session
from privlab.build.images import Images
from privlab.errors import GuestError
from privlab.inspect import PageTableTree, WalkView
from privlab.mmu import FaultKind

ADDR = 0x1000_0000
Render = Callable[[RenderableType], str]


@pytest.fixture
def writeonly(images: Images) -> Iterator[Session]:
    """Stopped at the program's write(1, ADDR, 16): the page is mapped W without R."""
    s = Session.boot("lab_mmap", ["writeonly", "tok", str(ADDR)], images=images)
    s.run_until_syscall("write")
    yield s
    s.close()


@pytest.mark.parametrize(("access", "cause"), [("r", Exc.LOAD_PAGE_FAULT),
                                               ("w", Exc.STORE_PAGE_FAULT),
                                               ("x", Exc.EXEC_PAGE_FAULT)])
def test_user_access_to_a_write_only_page_stops_at_the_reserved_encoding(
        writeonly: Session, access: str, cause: Exc) -> None:
    w = writeonly.translate(ADDR, access, priv=Priv.U)
    assert w.pa is None and w.fault is not None
    assert (w.fault.kind, w.fault.cause, w.fault.level) == (FaultKind.WRITE_WITHOUT_READ,
                                                             cause, 0)
    assert w.steps[-1].pte is not None and w.steps[-1].pte.spelled() == "-w-u-ad"


def test_walk_view_names_the_reserved_encoding_as_the_fault(writeonly: Session,
                                                            render: Render) -> None:
    text = render(WalkView(writeonly.translate(ADDR, "w", priv=Priv.U)))
    assert "reserved encoding W=1 with R=0" in text
    assert text.rstrip().splitlines()[-1] == (
        "✗ store_page_fault (cause 15): level 0: reserved encoding W=1 with R=0")


def test_page_table_tree_marks_the_write_only_leaf(writeonly: Session, render: Render) -> None:
    table = writeonly.page_table()
    mapping = table.find(ADDR)
    assert mapping is not None and (int(mapping.va), mapping.size) == (ADDR, 0x1000)
    lines = render(PageTableTree(table, max_lines=None)).splitlines()
    leaf = next(x for x in lines if f"{ADDR:#012x}-{ADDR + 0xfff:#012x}" in x)
    assert leaf.endswith(f"-w-u-ad     4 KiB  pa {int(mapping.pa):#x}  reserved")
    assert lines[-1] == ("reserved: W without R, an encoding the spec reserves; any access "
                         "through it page-faults")
    assert sum("reserved" in x for x in lines) == 2  # no other leaf of the program is


def test_page_table_tree_colours_the_w_of_a_write_only_leaf(writeonly: Session,
                                                           render_ansi: Render) -> None:
    plain = render_ansi(PageTableTree(writeonly.page_table(), max_lines=None))
    leaf = next(x for x in plain.splitlines() if f"{ADDR:#012x}" in x and "KiB" in x)
    fault = render_ansi(Text("w", "fault")).rstrip("\n")
    assert fault in leaf


def test_debugger_read_of_a_write_only_page_is_an_error_naming_why(writeonly: Session) -> None:
    with pytest.raises(GuestError, match=r"0x10000000 is not mapped \(level 0: reserved "
                                         r"encoding W=1 with R=0\)"):
        writeonly.read_virt(ADDR, 16)
