"""Fixtures for the inspector tests: the bundled images built once per session (into
build/test-inspect/, so a concurrent rebuild of build/<arch>/ by another run cannot
change them under us; a fixed directory keeps the build cache warm across sessions),
a fresh Session per test, and a renderer at the golden width."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from io import StringIO
from pathlib import Path

import pytest
from rich.console import Console, RenderableType

from harness.api import Session
from harness.build.images import Images, build_images
from harness.inspect import THEME, make_console
from harness.paths import REPO_ROOT

WIDTH = 100


OUT = REPO_ROOT / "build" / "test-inspect"


@pytest.fixture(scope="session")
def images() -> Images:
    return build_images("rv64", out_dir=OUT / "rv64", listings=False)


@pytest.fixture(scope="session")
def images32() -> Images:
    return build_images("rv32", out_dir=OUT / "rv32", listings=False)


@pytest.fixture
def hello(images: Images) -> Iterator[Session]:
    """hello booted on the bundled firmware and kernel, capturing syscall memory."""
    s = Session.boot("hello", images=images, capture=True)
    yield s
    s.close()


@pytest.fixture
def render() -> Callable[[RenderableType], str]:
    """Plain text of a renderable at the golden width, like rich's own tests."""
    def go(renderable: RenderableType) -> str:
        out = StringIO()
        make_console(width=WIDTH, file=out, color=False).print(renderable)
        return out.getvalue()
    return go


@pytest.fixture
def render_ansi() -> Callable[[RenderableType], str]:
    """The same with truecolor escapes, to pin which spans carry which style."""
    def go(renderable: RenderableType) -> str:
        out = StringIO()
        Console(width=WIDTH, file=out, theme=THEME, color_system="truecolor",
                force_terminal=True, highlight=False).print(renderable)
        return out.getvalue()
    return go


def elf_code(path: Path, addr: int, size: int) -> bytes:
    """Bytes of an ELF image at a virtual address (from its loadable segments)."""
    from harness.machine import load_elf
    image = load_elf(path)
    for seg in image.segments:
        if seg.vaddr <= addr < seg.vaddr + len(seg.data):
            off = addr - seg.vaddr
            return seg.data[off:off + size]
    raise KeyError(hex(addr))
