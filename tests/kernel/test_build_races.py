"""Builds of the same program at the same time (xdist workers sharing one cache, a
grader's workers) never see each other's half-written files: the cached ELF and its
listings are written beside and renamed, under a name of the writer's own. Before,
two writers shared one `.tmp` name (one renamed the other's away: FileNotFoundError)
and copied the ELF in place (a reader got "Magic number does not match")."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

BUILD = """
import sys
from pathlib import Path
from conformance.programs import INCLUDE_DIR, RUNTIME_SOURCES, program_source
from privlab.build import RV32
from privlab.build.baremetal import build_baremetal
from privlab.machine import load_elf
out = Path(sys.argv[1])
for _ in range(40):
    elf = build_baremetal([program_source("tvec_modes"), *RUNTIME_SOURCES], RV32, out,
                          include_dirs=[INCLUDE_DIR])
    assert load_elf(elf).entry
print("ok")
"""


def test_six_processes_building_one_program_into_one_place(tmp_path: Path,
                                                            monkeypatch: pytest.MonkeyPatch
                                                            ) -> None:
    monkeypatch.setenv("PRIVLAB_CACHE", str(tmp_path / "cache"))   # cold: all race to write
    out = tmp_path / "out" / "tvec_modes.elf"
    tests = Path(__file__).resolve().parent.parent
    procs = [subprocess.Popen([sys.executable, "-c", BUILD, str(out)], cwd=tests,
                              env={**os.environ, "PYTHONPATH": str(tests)},
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for _ in range(6)]
    results = [p.communicate(timeout=300) for p in procs]
    assert [(p.returncode, out_text.strip()) for p, (out_text, _) in zip(procs, results,
                                                                       strict=True)] == \
        [(0, "ok")] * 6, [err[-800:] for _, err in results]
    assert out.with_suffix(".dis").read_text().startswith("\nDisassembly of section")
    assert not [p.name for p in out.parent.iterdir() if p.name.endswith(".tmp")]
