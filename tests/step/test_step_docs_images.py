"""docs/inspect/step.md's screenshots are there, are PNGs of the sizes they claim, and
stay small (tests/step/screenshots.py makes them)."""

from __future__ import annotations

import re
import struct

from privlab.paths import REPO_ROOT

DOCS = REPO_ROOT / "docs" / "inspect"


def test_every_screenshot_step_md_shows_is_a_small_png() -> None:
    text = (DOCS / "step.md").read_text()
    shown = re.findall(r"!\[[^\]]*\]\((images/[^)]+\.png)\)", text)
    assert {s.rsplit("/", 1)[1] for s in shown} == {
        "step-120x40-y.png", "step-120x40-b.png", "step-120x40-back-trap.png",
        "step-160x50-back-trap.png", "step-web-120x40-back-trap.png"}
    widths = {}
    for rel in shown:
        data = (DOCS / rel).read_bytes()
        assert data[:8] == b"\x89PNG\r\n\x1a\n" and data[12:16] == b"IHDR", rel
        widths[rel] = struct.unpack(">II", data[16:24])
        assert len(data) < 200_000, f"{rel}: {len(data):,} bytes"
    # 160 columns draw wider than 120, in the same font
    w120 = widths["images/step-120x40-y.png"][0]
    w160 = widths["images/step-160x50-back-trap.png"][0]
    assert abs(w160 / w120 - 160 / 120) < 0.05, widths
