"""Fixtures shared by every test package: the bundled images, built once per session
(where and how: built_images.py).

`pytester` (pytest's own tester) runs the plugin tests in tests/grade/test_plugin.py."""

from __future__ import annotations

import pytest
from built_images import built

from privlab.build.images import Images

pytest_plugins = ["pytester"]


@pytest.fixture(scope="session")
def images() -> Images:
    """The bundled rv64 firmware, kernel, user programs and initrd (with listings)."""
    return built("rv64")


@pytest.fixture(scope="session")
def images32() -> Images:
    """The same for rv32."""
    return built("rv32")
