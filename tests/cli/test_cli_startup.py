"""`privlab` starts fast: building the parser (which every command does, `--help`
included) loads none of the heavy layers; each command loads what it needs when it runs."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from machine.asm import build_asm

from privlab.cli.main import COMMANDS, build_parser, command_module
from privlab.paths import REPO_ROOT

HEAVY = ("rich", "elftools", "unicorn", "capstone", "privlab.machine.hart",
         "privlab.api.session", "privlab.inspect", "privlab.course.grade_one",
         "privlab.build.images")


def _modules_after(code: str) -> set[str]:
    probe = (f"import sys\n{code}\nloaded = sorted(sys.modules)\n"   # before json's own import
             "import json\nprint(json.dumps(loaded))")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                         check=True).stdout
    return set(json.loads(out.splitlines()[-1]))


def _modules_after_warm(args: list[str]) -> set[str]:
    """The modules `privlab ARGS` loads, quiet, on its second run: the first builds or
    stamps what it needs and fills the caches, as a user's first command does."""
    code = ("from privlab.cli.main import main\n"
            "import contextlib, io\n"
            "with contextlib.redirect_stdout(io.StringIO()):\n"
            f"    status = main({args!r})\n"
            "assert status == 0, status\n")
    subprocess.run([sys.executable, "-c", code], check=True, capture_output=True)
    return _modules_after(code)


def _heavy(loaded: set[str]) -> list[str]:
    return sorted(m for m in loaded if any(m == h or m.startswith(f"{h}.") for h in HEAVY))


def test_building_the_parser_loads_no_heavy_module() -> None:
    loaded = _modules_after("from privlab.cli.main import build_parser\nbuild_parser()")
    assert _heavy(loaded) == []


@pytest.mark.parametrize("command", ["run", "trace", "inspect", "tour"])
def test_a_commands_help_loads_no_heavy_module(command: str) -> None:
    code = ("from privlab.cli.main import main\n"
            f"try:\n    main([{command!r}, '--help'])\nexcept SystemExit:\n    pass\n"
            "import sys; sys.stdout.write('\\n')")
    loaded = _modules_after(code)
    assert _heavy(loaded) == []


def test_every_command_is_registered_with_a_function_to_run() -> None:
    parser = build_parser()
    sub = parser._subparsers._group_actions[0]  # type: ignore[union-attr]
    assert list(sub.choices) == list(COMMANDS)
    for name, command in sub.choices.items():
        inner = command._subparsers._group_actions[0].choices if command._subparsers \
            else {"": command}  # `lab list`, `lab handout`, ...: each sets its own
        for verb, parser in inner.items():
            assert callable(parser.get_default("func")), f"{name} {verb}"


def test_the_command_table_names_every_command_module() -> None:
    """A *_cmd.py left out of COMMANDS would be a command nobody can run."""
    modules = {p.stem for p in (REPO_ROOT / "harness" / "cli").glob("*_cmd.py")}
    assert {f"{name}_cmd" for name in COMMANDS} == modules
    assert all(command_module(name).__name__.endswith(f".{name}_cmd") for name in COMMANDS)


def test_a_plain_run_reads_no_dwarf_and_no_package_metadata() -> None:
    """`privlab run` boots from the stamped build and the cached ELF loads: the DWARF
    readers (pyelftools, the kernel mirrors), importlib.metadata (zig's identity, asked
    for only when the native core must be built), the toolchain and the generated
    headers (the stamp says the images are built), the file-system tools (the build made
    the disk), the page-table walker (nothing is symbolized) and the fdt package (the
    device tree is written by boot/flattree.py) stay unloaded; so does typing, as in a bare
    run."""
    loaded = _modules_after_warm(["run", "--quiet", "--user", "hello"])
    assert sorted(m for m in loaded if m.startswith(("elftools", "importlib.metadata",
                                                     "subprocess", "privlab.build.toolchain",
                                                     "privlab.build.generated",
                                                     "privlab.kernelinfo.mirrors",
                                                     "privlab.kernelinfo.dwarf",
                                                     "privlab.fs", "privlab.mmu",
                                                     "privlab.grade", "fdt", "typing"))) == []


def test_a_bare_run_loads_only_the_machine_it_runs() -> None:
    """`privlab run --bios none --kernel T`, the riscv-tests' way: Unicorn through
    privlab's own dozen calls (harness/machine/engine.py), not the unicorn package's
    binding and its importlib.resources; no toolchain (the core is built), no disk or
    virtio-blk model without a drive, no initrd or program packing, no QEMU grammar; no
    OpenSSL for the run's keys (harness/digest.py) and no shutil for the help's width
    (harness/cli/helplayout.py); no fdt package for the device tree (boot/flattree.py);
    no typing module (the modules a run loads import it only for the type checker, and
    harness/protocol.py stands in for its Protocol); no pyelftools, even the first time
    an ELF runs (harness/machine/loader.py reads it with struct); no json (the build
    stamps are marshalled, harness/build/stamp.py); no device tree (a bare run passes
    none), no system-call tables or stopping points (the inspectors' options), and none
    of the diagnosis a run that ends badly prints; no virtqueue model for the eight
    empty virtio-mmio slots, no C header text (abi/spec_header.py: the core is
    built), not the signal module's enums (its C half, `_signal`, serves); not the
    page-table formats (the machine needs the page size alone), the code sharing of
    several harts, nor the description of what runs (`Booted.info`, which only the
    inspectors ask for)."""
    kernel = build_asm("PASS")
    code = ("from privlab.cli.main import main\n"
            f"status = main(['run', '--quiet', '--bios', 'none', '--kernel', {str(kernel)!r}])\n"
            "assert status == 0, status\n")
    loaded = _modules_after(code)
    assert "privlab.machine.engine" in loaded      # the probe ran a machine
    unwanted = ("unicorn", "importlib.resources", "importlib.metadata", "subprocess",
                "privlab.build.toolchain", "privlab.devices.disk", "privlab.devices.virtio_blk",
                "privlab.boot.bootargs", "privlab.boot.programs", "privlab.boot.bootdisk",
                "privlab.qemucmd.grammar", "privlab.kernelinfo.dwarf", "hashlib", "_hashlib",
                "shutil", "fdt", "typing", "elftools", "json", "privlab.boot.dtb",
                "privlab.boot.flattree", "privlab.abi.syscall_table", "privlab.api.points",
                "privlab.cli.diagnose", "privlab.devices.virtqueue", "privlab.abi.spec_header",
                "signal", "privlab.abi.paging", "privlab.machine.codesync", "privlab.kernelinfo")
    assert sorted(m for m in loaded if m.startswith(unwanted)) == []


def test_a_qemu_command_line_loads_what_a_bare_run_leaves_out_no_more() -> None:
    """`privlab qemu ...`, what a course's Makefile runs in QEMU's place: its own
    option parser builds no argparse formatter that loads shutil (and with it zlib, bz2
    and lzma), and the command imports typing for the type checker alone."""
    kernel = build_asm("PASS")
    code = ("from privlab.cli.main import main\n"
            f"status = main(['qemu', '-nographic', '-machine', 'virt', '-bios', 'none', "
            f"'-kernel', {str(kernel)!r}])\n"
            "assert status == 0, status\n")
    loaded = _modules_after(code)
    assert "privlab.qemucmd.grammar" in loaded     # the probe ran the QEMU line
    assert sorted(m for m in loaded if m.startswith(("shutil", "typing", "lzma", "bz2"))) \
        == []


def test_a_warm_trace_reads_no_elf_with_pyelftools_and_loads_no_disassembler() -> None:
    """`privlab trace --user hello` names each row's place from the cached symbol and
    line tables (kernelinfo/symbols.py ElfTable) and the cached DWARF types: pyelftools
    is not loaded, nor capstone and the other inspectors' views."""
    loaded = _modules_after_warm(["trace", "--user", "hello"])
    assert "privlab.trace.stream" in loaded          # the probe traced
    assert sorted(m for m in loaded if m.startswith((
        "elftools", "capstone", "privlab.inspect.disasm", "privlab.inspect.diskview",
        "privlab.inspect.pagetable"))) == []


def test_the_core_starts_loading_before_the_command_line_and_the_layouts_are_imported() -> None:
    """harness/entry.py checks the core's stamp and starts its load (24 MB of
    libunicorn, relocated on a thread of its own, native/preload.py) before it imports
    argparse, the command line, or the layouts the machine shares with the C: the load
    is then done by the time the machine needs it, and every import cut on the main
    thread is a cut of the run's wall time."""
    kernel = build_asm("PASS")
    probe = (
        "import sys\n"
        "seen = {}\n"
        "class Watch:\n"
        "    @staticmethod\n"
        "    def find_spec(name, path=None, target=None):\n"
        "        if name in ('argparse', 'privlab.abi.native_layout', 'privlab.cli.main') \\\n"
        "                and name not in seen:\n"
        "            preload = sys.modules.get('privlab.native.preload')\n"
        "            seen[name] = preload is not None and preload._loading is not None\n"
        "        return None\n"
        "sys.meta_path.insert(0, Watch)\n"
        f"sys.argv = ['privlab', 'run', '--quiet', '--bios', 'none', '--kernel', {str(kernel)!r}]\n"
        "import atexit\n"
        "atexit.register(lambda: print(sorted(seen.items())))\n"
        "from privlab.entry import main\n"
        "main()\n")
    subprocess.run([sys.executable, "-c", probe], check=True, capture_output=True)  # stamps
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().splitlines()[-1] == (
        "[('argparse', True), ('privlab.abi.native_layout', True), ('privlab.cli.main', True)]")
