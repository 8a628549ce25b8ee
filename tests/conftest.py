"""Fixtures shared by every test package: the bundled images, built once per session.

They are built into build/test-images/<arch>/, not build/<arch>/, so a concurrent
`privlab build` or `privlab run` of another process cannot rebuild them under a test
(a fixed directory keeps the build cache warm across sessions). With listings
(`.dis`, `.map`), which the build tests check.

`pytester` (pytest's own tester) runs the plugin tests in tests/grade/test_plugin.py."""

from __future__ import annotations

import pytest

from privlab.build.images import Images, build_images
from privlab.paths import REPO_ROOT

pytest_plugins = ["pytester"]

OUT = REPO_ROOT / "build" / "test-images"


@pytest.fixture(scope="session")
def images() -> Images:
    """The bundled rv64 firmware, kernel, user programs and initrd (with listings)."""
    return build_images("rv64", out_dir=OUT / "rv64")


@pytest.fixture(scope="session")
def images32() -> Images:
    """The same for rv32."""
    return build_images("rv32", out_dir=OUT / "rv32")
