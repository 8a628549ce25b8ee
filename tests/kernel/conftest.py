"""Fixtures for the kernel tests: the built images, once per session."""

from __future__ import annotations

import pytest

from harness.build.images import Images, build_images


@pytest.fixture(scope="session")
def images() -> Images:
    return build_images("rv64")


@pytest.fixture(scope="session")
def images32() -> Images:
    return build_images("rv32")
