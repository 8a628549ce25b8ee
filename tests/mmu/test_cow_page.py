"""A live copy-on-write page (`lab_cow share`, userland/lab_cow.c), stopped at the
child's first getppid(), right after fork: the page-table tree marks the pages fork
shared writable as cow (PTE_COW, an RSW bit) and not the read-only text, and the walk
reads them but stops a store at W, the store page fault the kernel then resolves."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest
from rich.console import RenderableType

from privlab.abi.csr import Exc, Priv
from privlab.abi.paging import PTE_COW
from privlab.api import Session
from privlab.build.images import Images
from privlab.inspect import PageTableTree
from privlab.mmu import FaultKind

Render = Callable[[RenderableType], str]
STACK = 0x3F_FFFF_D000   # the top page of the user stack (kernel/memlayout.h, rv64)


@pytest.fixture
def child(images: Images) -> Iterator[Session]:
    s = Session.boot("lab_cow", ["share", "tok", "3"], images=images)
    s.run_until_syscall("getppid")
    yield s
    s.close()


def test_the_tree_marks_shared_writable_pages_cow_and_the_text_not(child: Session,
                                                                   render: Render) -> None:
    table = child.page_table()
    stack, text = table.find(STACK), table.find(0x10000)
    assert stack is not None and text is not None
    assert stack.pte.raw & PTE_COW and not stack.pte.raw & 0x4   # COW, W cleared
    assert not text.pte.raw & PTE_COW
    text_out = render(PageTableTree(table, max_lines=None))
    lines = text_out.splitlines()
    assert any("r--u-ad" in x and x.rstrip().endswith("cow") for x in lines)
    assert not any("r-xu-ad" in x and "cow" in x for x in lines)
    assert "\ncow: shared by fork, copy-on-write (PTE_COW, a software bit)" in text_out

def test_a_cow_page_reads_but_a_store_stops_at_w(child: Session) -> None:
    read = child.translate(STACK, "r", priv=Priv.U)
    assert read.fault is None and read.pa is not None
    store = child.translate(STACK, "w", priv=Priv.U)
    assert store.fault is not None
    assert (store.fault.kind, store.fault.cause, store.fault.level) == (
        FaultKind.NOT_WRITABLE, Exc.STORE_PAGE_FAULT, 0)
