"""The bundled images the tests boot, built once per process and arch: the one place
that says where (build/test-images/<arch>/, not build/<arch>/, so a concurrent
`privlab build` or `privlab run` of another process cannot rebuild them under a test;
a fixed directory keeps the build cache warm across sessions) and how (with listings,
`.dis` and `.map`, which the build tests check). conftest.py's `images` and `images32`
fixtures and any test that needs an arch chosen at run time use `built(arch)`."""

from __future__ import annotations

from functools import cache

from privlab.build.images import Images, build_images
from privlab.paths import REPO_ROOT

__all__ = ["OUT", "built"]

OUT = REPO_ROOT / "build" / "test-images"


@cache
def built(arch: str) -> Images:
    return build_images(arch, out_dir=OUT / arch)
