"""dirty.c: the host kernel's list of written RAM pages (userfaultfd write-protection and
PAGEMAP_SCAN), which code sync between harts and snapshots read.

The kernel returns the written pages as regions, at most as many per call as the core
gives it room for, and says where it stopped: a scan must go on from there until the
range is done, or pages written past the first batch of regions would go unnoticed (a
rewritten page of code another hart runs, a page a snapshot does not keep)."""

from __future__ import annotations

import ctypes
import mmap
from collections.abc import Callable, Iterator

import pytest

from privlab.native.library import load_library

PAGE = 4096
Tracked = tuple[mmap.mmap, Callable[..., list[int]]]


@pytest.fixture
def tracked() -> Iterator[Tracked]:
    lib = load_library()
    pages = 1024
    area = mmap.mmap(-1, pages * PAGE)
    base = ctypes.addressof(ctypes.c_char.from_buffer(area))
    tracker = lib.ram_tracker_new(ctypes.c_void_p(base), pages * PAGE)
    if not tracker:
        area.close()
        pytest.skip("the host kernel cannot track written pages (Linux 6.7+ with "
                    "userfaultfd's asynchronous write-protection)")
    idx = (ctypes.c_uint32 * pages)()

    def scan(lo: int = 0, hi: int = pages * PAGE) -> list[int]:
        n = lib.ram_tracker_scan_range(tracker, lo, hi, idx, pages)
        assert n >= 0
        return sorted(idx[i] for i in range(n))

    try:
        yield area, scan
    finally:
        lib.ram_tracker_free(tracker)
        area.close()


def test_every_written_page_is_listed_however_many_regions_they_make(tracked: Tracked) -> None:
    """400 written pages, each apart from the next (400 regions, more than one call
    returns): all are listed, once; a second scan lists none, a page written since."""
    area, scan = tracked
    written = list(range(0, 800, 2))
    for p in written:
        area[p * PAGE] = 1
    assert scan() == written
    assert scan() == []
    area[999 * PAGE + 5] = 7
    assert scan() == [999]


def test_a_scan_of_a_range_leaves_the_marks_outside_it(tracked: Tracked) -> None:
    area, scan = tracked
    for p in (3, 40, 41, 300):
        area[p * PAGE] = 1
    assert scan(32 * PAGE, 64 * PAGE) == [40, 41]
    assert scan() == [3, 300]
