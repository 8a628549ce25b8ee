"""Fixtures shared by every test package: the bundled images, built once per session
(where and how: built_images.py); a fresh Session of hello per test, and renderers at
the golden width, for the views' tests (inspect, trace, mmu, api).

`pytester` (pytest's own tester) runs the plugin tests in tests/grade/test_plugin.py."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from io import StringIO

import pytest
from built_images import built
from rich.console import Console, RenderableType

from privlab.api import Session
from privlab.build.images import Images
from privlab.inspect import THEME, make_console

pytest_plugins = ["pytester"]


@pytest.fixture(scope="session")
def images() -> Images:
    """The bundled rv64 firmware, kernel, user programs and initrd (with listings)."""
    return built("rv64")


@pytest.fixture(scope="session")
def images32() -> Images:
    """The same for rv32."""
    return built("rv32")


WIDTH = 100


@pytest.fixture
def hello(images: Images) -> Iterator[Session]:
    """hello booted on the bundled firmware and kernel, capturing syscall memory,
    without a disk: the kernel runs it from the initrd, so the events these tests
    count are the program's and the firmware's, not the disk's."""
    s = Session.boot("hello", images=images, capture=True, bundled_disk=False)
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

