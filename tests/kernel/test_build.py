"""The build: compiler errors, incremental rebuilds, listings, generated headers."""

from __future__ import annotations

import argparse
import re
import shutil
import time
from pathlib import Path

import pytest
from compiles import count_compiles
from elftools.elf.elffile import ELFFile

import privlab.build.images as images_module
import privlab.build.toolchain as toolchain
from privlab.build.images import Images, build_images
from privlab.cli import build_cmd
from privlab.cli.main import main
from privlab.errors import BuildError
from privlab.fs import DiskImage, check
from privlab.paths import KERNEL_DIR, USERLAND_DIR


def _copy_tree(tmp_path: Path) -> tuple[Path, Path]:
    kernel = tmp_path / "kernel"
    userland = tmp_path / "userland"
    shutil.copytree(KERNEL_DIR, kernel)
    shutil.copytree(USERLAND_DIR, userland)
    return kernel, userland


def test_compile_error_raises_build_error_with_the_compiler_output(tmp_path: Path) -> None:
    kernel, userland = _copy_tree(tmp_path)
    (kernel / "broken.c").write_text("int broken(void) { return undeclared_thing; }\n")
    with pytest.raises(BuildError) as info:
        build_images("rv64", kernel_dir=kernel, userland_dir=userland, out_dir=tmp_path / "out",
                     listings=False)
    assert "broken.c" in info.value.message
    assert "error: use of undeclared identifier 'undeclared_thing'" in info.value.output
    assert "broken.c:1:" in info.value.output


def test_rebuild_after_editing_one_file_recompiles_only_that_file(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    kernel, userland = _copy_tree(tmp_path)
    out = tmp_path / "out"
    build_images("rv64", kernel_dir=kernel, userland_dir=userland, out_dir=out, listings=False)
    proc = kernel / "proc.c"
    proc.write_text(proc.read_text() + f"\n// edited at {time.time()}\n")
    compiles = count_compiles(monkeypatch)
    images = build_images("rv64", kernel_dir=kernel, userland_dir=userland, out_dir=out)
    # How long that takes is measured by benchmarks/rebuild.py, not asserted here.
    assert [Path(c).name for c in compiles] == ["proc.c"]
    assert images.kernel.exists()


def test_the_elves_do_not_depend_on_where_the_tree_is(tmp_path: Path, images: Images) -> None:
    """A copy of the tree elsewhere builds byte-identical ELFs, initrd and disk (paths in
    DWARF are recorded as kernel/..., userland/..., build/rv64/gen/...), so a trace
    is the same in every checkout and in a grader's staging directory."""
    kernel, userland = _copy_tree(tmp_path / "elsewhere")
    copy = build_images("rv64", kernel_dir=kernel, userland_dir=userland,
                        out_dir=tmp_path / "out", listings=False)
    pairs = [(images.firmware, copy.firmware), (images.kernel, copy.kernel),
             (images.initrd, copy.initrd), (images.disk, copy.disk),
             *((images.users[n], copy.users[n]) for n in sorted(images.users))]
    assert [a.name for a, b in pairs if a.read_bytes() != b.read_bytes()] == []


def test_outputs_sit_in_build_dir_with_disassembly_and_symbol_map(images: Images) -> None:
    assert images.kernel.parent == images.out_dir
    for elf in (images.firmware, images.kernel, images.users["hello"]):
        dis = elf.with_suffix(".dis").read_text()
        sym = elf.with_suffix(".map").read_text()
        assert "Disassembly of section .text" in dis
        assert re.search(r"^[0-9a-f]+ <\w+>:$", dis, re.M)
        assert "Symbols:" in sym
    kernel_dis = images.kernel.with_suffix(".dis").read_text()
    assert "<usertrap>:" in kernel_dis and "sret" in kernel_dis
    assert " usertrap\n" in images.kernel.with_suffix(".map").read_text()
    assert set(images.users) >= {"init", "sh", "hello", "usertests", "fuzz", "hostile"}


def test_the_disk_image_holds_every_user_program_at_the_root_and_is_consistent(
        images: Images) -> None:
    img = DiskImage.open(images.disk)
    assert images.disk == images.out_dir / "fs.img"
    assert [e.path for e in img.walk()] == ["/", *(f"/{n}" for n in sorted(images.users))]
    for name, elf in images.users.items():
        assert img.read_path(name) == elf.read_bytes()
    assert check(img) == []


def test_a_rebuild_leaves_an_unchanged_disk_image_alone(tmp_path: Path, images: Images) -> None:
    kernel, userland = _copy_tree(tmp_path / "tree")
    out = tmp_path / "out"
    first = build_images("rv64", kernel_dir=kernel, userland_dir=userland, out_dir=out,
                         listings=False)
    stamp = first.disk.stat().st_mtime_ns
    time.sleep(0.01)
    again = build_images("rv64", kernel_dir=kernel, userland_dir=userland, out_dir=out,
                         listings=False)
    assert again.disk.stat().st_mtime_ns == stamp


def _struct_offsets(elf_path: Path, struct: str) -> dict[str, int]:
    with elf_path.open("rb") as f:
        dwarf = ELFFile(f).get_dwarf_info()
        for cu in dwarf.iter_CUs():
            for die in cu.iter_DIEs():
                name = die.attributes.get("DW_AT_name")
                if die.tag == "DW_TAG_structure_type" and name and name.value == struct.encode() \
                        and die.has_children:
                    return {c.attributes["DW_AT_name"].value.decode():
                            c.attributes["DW_AT_data_member_location"].value
                            for c in die.iter_children() if c.tag == "DW_TAG_member"}
    raise AssertionError(f"struct {struct} not in {elf_path}")


def test_trapframe_offsets_for_asm_equal_the_kernel_dwarf(images: Images) -> None:
    header = (images.out_dir / "gen" / "asm-offsets.h").read_text()
    defines = {m[0]: int(m[1]) for m in re.findall(r"#define (TF_\w+) (\d+)", header)}
    dwarf = _struct_offsets(images.kernel, "trapframe")
    assert len(dwarf) == 36  # 5 kernel fields + 31 registers
    assert {f"TF_{k.upper()}": v for k, v in dwarf.items()} == defines


def test_build_command_offers_the_toolchains_architectures_and_all() -> None:
    sub = argparse.ArgumentParser().add_subparsers()
    build_cmd.register(sub)
    arch = next(a for a in sub.choices["build"]._actions if a.dest == "arch")
    assert list(arch.choices or ()) == [*toolchain.ARCHES, "all"]


def test_build_command_prints_compiler_output_verbatim(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    def failing_build(*args: object, **kwargs: object) -> Images:
        raise BuildError("compiling kernel/x.c failed", "kernel/x.c:1:2: error: boom\n")

    monkeypatch.setattr(images_module, "build_images", failing_build)
    # The command line prints a BuildError's output for every command (main.py), then
    # its one line.
    assert main(["build"]) == 1
    assert capsys.readouterr().err == ("kernel/x.c:1:2: error: boom\n"
                                       "privlab: compiling kernel/x.c failed\n")


def test_an_unchanged_tree_is_up_to_date_from_its_stamp_and_a_touched_one_is_not(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    kernel, userland = _copy_tree(tmp_path)     # copytree keeps the files' old mtimes
    out = tmp_path / "out"
    first = build_images("rv64", kernel_dir=kernel, userland_dir=userland, out_dir=out,
                         listings=False)
    assert images_module.stamp_path(out).exists()
    assert not list(out.rglob("*stamp*"))          # the build directory holds outputs only
    real_build = images_module._build
    builds: list[Path] = []

    def no_build(*args: object, **kwargs: object) -> Images:
        builds.append(kernel)
        return real_build(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(images_module, "_build", no_build)
    again = build_images("rv64", kernel_dir=kernel, userland_dir=userland, out_dir=out,
                         listings=False)
    assert builds == []
    assert again == first
    build_images("rv64", kernel_dir=kernel, userland_dir=userland, out_dir=out)
    assert len(builds) == 1                      # listings asked for: not in the stamp
    (userland / "hello.c").touch()               # same bytes, new mtime: the full check
    assert build_images("rv64", kernel_dir=kernel, userland_dir=userland, out_dir=out,
                        listings=False) == first
    assert len(builds) == 2
    first.kernel.write_bytes(b"damaged")         # an output changed: rebuilt
    build_images("rv64", kernel_dir=kernel, userland_dir=userland, out_dir=out, listings=False)
    assert len(builds) == 3
    assert first.kernel.read_bytes()[:4] == b"\x7fELF"
