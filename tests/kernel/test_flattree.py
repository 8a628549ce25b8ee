"""privlab's DTB writer (harness/boot/flattree.py): the layout the Devicetree
Specification v0.4 gives, the bytes the `fdt` package writes for the same tree, and a
blob dtc reads without a word."""

from __future__ import annotations

import itertools
import shutil
import struct
import subprocess
from pathlib import Path

import fdt
import pytest

from privlab.boot.dtb import build_dtb
from privlab.boot.flattree import FDT_MAGIC, Node, empty, strings, to_dtb, words

CONFIGS = list(itertools.product(
    [1, 3, 8],                                            # harts
    [32, 64],                                             # xlen
    ["", "console=uart init=/hello x"],                   # bootargs
    [None, (0x8400_0000, 0x8410_0000), (0x8400_0000, 0x1_0400_0000)],   # initrd
))


@pytest.mark.parametrize(("harts", "xlen", "bootargs", "initrd"), CONFIGS)
def test_the_blob_is_what_the_fdt_package_writes_for_the_same_tree(
        harts: int, xlen: int, bootargs: str, initrd: tuple[int, int] | None) -> None:
    """Parsed by `fdt` and written again by it, the machine's tree comes out byte for
    byte as privlab wrote it: the same blocks, padding and strings-block order."""
    blob = build_dtb(0x8000_0000, 6 << 30, bootargs, initrd, xlen, harts=harts)
    assert fdt.parse_dtb(blob).to_dtb(version=17) == blob


def test_the_header_places_each_block_as_the_specification_says() -> None:
    root = Node("", words("#address-cells", 2), Node("chosen", strings("bootargs", "x")))
    blob = to_dtb(root)
    (magic, total, off_struct, off_strings, off_rsvmap, version, last_comp, boot_cpu,
     size_strings, size_struct) = struct.unpack(">10I", blob[:40])
    assert (magic, version, last_comp, boot_cpu) == (FDT_MAGIC, 17, 16, 0)
    assert total == len(blob) and off_rsvmap == 40 and off_rsvmap % 8 == 0
    assert blob[off_rsvmap:off_struct] == bytes(16)          # the terminating entry alone
    assert off_struct + size_struct == off_strings
    assert blob[off_strings:off_strings + size_strings] == b"#address-cells\0bootargs\0"
    body = blob[off_struct:off_struct + size_struct]
    assert body[:8] == struct.pack(">II", 1, 0)              # BEGIN_NODE "" (padded)
    assert body[8:24] == struct.pack(">IIII", 3, 4, 0, 2)    # PROP, one cell, name at 0
    assert body[-8:] == struct.pack(">II", 2, 9)             # END_NODE (root), END


def test_names_are_stored_once_and_values_padded_to_words() -> None:
    root = Node("", strings("compatible", "a"), Node("n", strings("compatible", "bcde"),
                                                    empty("ranges")))
    blob = to_dtb(root)
    off_strings, size_strings, size_struct = (struct.unpack(">I", blob[12:16])[0],
                                              struct.unpack(">I", blob[32:36])[0],
                                              struct.unpack(">I", blob[36:40])[0])
    assert blob[off_strings:off_strings + size_strings] == b"compatible\0ranges\0"
    assert size_struct % 4 == 0
    tree = fdt.parse_dtb(blob)
    assert tree.get_property("compatible", "/n").value == "bcde"
    assert tree.get_node("/n").exist_property("ranges")


@pytest.mark.skipif(shutil.which("dtc") is None, reason="needs dtc (device-tree-compiler)")
@pytest.mark.parametrize("harts", [1, 3])
def test_dtc_reads_the_machines_tree_without_a_warning(harts: int, tmp_path: Path) -> None:
    blob = tmp_path / "virt.dtb"
    blob.write_bytes(build_dtb(0x8000_0000, 128 << 20, "console=uart", (0x8400_0000,
                                                                        0x8410_0000),
                               64, harts=harts))
    # QEMU 7.2's cpu interrupt controllers have no #address-cells either, and dtc
    # says so of QEMU's own tree: that check is about the content QEMU chose
    done = subprocess.run(["dtc", "-W", "no-interrupt_provider", "-I", "dtb", "-O", "dts",
                           str(blob)], capture_output=True, text=True)
    assert done.returncode == 0 and done.stderr == ""
    assert f"cpu@{harts - 1} {{" in done.stdout and 'bootargs = "console=uart";' in done.stdout
