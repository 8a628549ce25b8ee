"""The device tree's /cpus/cpu-map, for one hart as for several, as QEMU 7.2 writes it:
firmware counts the harts from it (RustSBI 0.1.1 prints "assuming 7 cores" without)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import fdt
import pytest

from privlab.boot.dtb import build_dtb


def _cores(tree: fdt.FDT) -> dict[str, int]:
    """core name -> the phandle its `cpu` names, and each cpu@k's own phandle."""
    cluster = tree.get_node("/cpus/cpu-map/cluster0")
    cores = {node.name: node.get_property("cpu").value for node in cluster.nodes}
    cpus = {node.name: node.get_property("phandle").value
            for node in tree.get_node("/cpus").nodes if node.name.startswith("cpu@")}
    return {**cores, **cpus}


@pytest.mark.parametrize("harts", [1, 3])
def test_every_core_of_the_cpu_map_names_its_cpu(harts: int) -> None:
    tree = fdt.parse_dtb(build_dtb(0x8000_0000, 128 << 20, "", None, 64, harts=harts))
    cores = _cores(tree)
    assert sorted(k for k in cores if k.startswith("core")) == [f"core{k}"
                                                                for k in range(harts)]
    for k in range(harts):
        assert cores[f"core{k}"] == cores[f"cpu@{k}"]


@pytest.mark.parametrize("harts", [1, 3])
def test_cpu_map_equals_qemus(harts: int, tmp_path: Path) -> None:
    qemu = shutil.which("qemu-system-riscv64")
    if qemu is None:
        pytest.skip("qemu-system-riscv64 is not installed")
    dumped = tmp_path / "virt.dtb"
    subprocess.run([qemu, "-machine", f"virt,dumpdtb={dumped}", "-smp", str(harts),
                    "-bios", "none", "-nographic"], capture_output=True, timeout=60,
                   check=True)
    theirs = fdt.parse_dtb(dumped.read_bytes())
    ours = fdt.parse_dtb(build_dtb(0x8000_0000, 128 << 20, "", None, 64, harts=harts))
    assert _cores(ours) == _cores(theirs)
