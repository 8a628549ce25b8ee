"""`privlab build` gives the same bytes wherever the project, its venv, the working
directory and the user's home are.

Each install here is what a new user makes: a copy of the project at a path of its own
length, its own venv (with its own `ziglang` package, so zig's headers sit at another
path), `privlab build --arch all` run from another working directory, with another
HOME, user name and build cache. Every output (ELFs, initrds, listings, generated
sources) must be the same bytes, and none may hold a path of the machine.
"""

from __future__ import annotations

import base64
import hashlib
import importlib.metadata
import os
import re
import shutil
import site
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

import privlab.build.toolchain as toolchain
from privlab.build.toolchain import zig_home
from privlab.errors import BuildError
from privlab.paths import REPO_ROOT

# What `privlab build` reads: the package (generators, linker scripts) and the sources.
# The package folder harness/ is copied as privlab/, the name it is imported by, so the
# copy on PYTHONPATH is the one that runs.
PROJECT_PARTS = {"pyproject.toml": "pyproject.toml", "harness": "privlab", "kernel": "kernel",
                 "userland": "userland"}
BUILD_TIMEOUT = 300


@dataclass(frozen=True)
class Install:
    project: Path
    venv: Path
    home: Path
    cwd: Path
    user: str

    def machine_paths(self) -> list[str]:
        return [str(p) for p in (self.project, self.venv, self.home, self.cwd)]


def _link_tree(src: Path, dst: Path) -> None:
    """Hard-link `src` into `dst` (a copy where links cannot be made): zig then runs
    from `dst`, exactly as from another venv's site-packages."""
    def link(s: str, d: str) -> None:
        try:
            os.link(s, d)
        except OSError:
            shutil.copy2(s, d)
    shutil.copytree(src, dst, copy_function=link)


def _make_venv(venv: Path) -> None:
    """A venv of its own whose ziglang is its own; every other dependency is read from
    the venv running this test (a .pth line, which does not run that venv's own .pth
    files, so the copy's `privlab` is the only one importable)."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    ver = f"python{sys.version_info.major}.{sys.version_info.minor}"
    packages = venv / "lib" / ver / "site-packages"
    home = zig_home()
    _link_tree(home, packages / "ziglang")
    for info in home.parent.glob("ziglang-*.dist-info"):
        shutil.copytree(info, packages / info.name)
    (packages / "privlab-deps.pth").write_text("\n".join(site.getsitepackages()) + "\n")


def _make_install(root: Path, name: str, user: str) -> Install:
    project = root / "project"
    project.mkdir(parents=True)
    for part, copy in PROJECT_PARTS.items():
        src = REPO_ROOT / part
        if src.is_dir():
            shutil.copytree(src, project / copy,
                            ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
        else:
            shutil.copy2(src, project / copy)
    venv = root / f"venv-{name}"
    _make_venv(venv)
    home, cwd = root / f"home-{user}", root / "somewhere" / "else"
    home.mkdir()
    cwd.mkdir(parents=True)
    return Install(project, venv, home, cwd, user)


def _start_build(inst: Install) -> subprocess.Popen[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PRIVLAB_", "XDG_"))}
    env.update(HOME=str(inst.home), USER=inst.user, LOGNAME=inst.user,
               PYTHONPATH=str(inst.project), PRIVLAB_CACHE=str(inst.home / "cache"))
    return subprocess.Popen([str(inst.venv / "bin" / "python"), "-m", "privlab", "build",
                             "--arch", "all", "--quiet"],
                            cwd=inst.cwd, env=env, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT)


def _outputs(inst: Install) -> dict[str, bytes]:
    build = inst.project / "build"
    return {str(p.relative_to(build)): p.read_bytes()
            for p in sorted(build.rglob("*")) if p.is_file()}


@pytest.fixture(scope="module")
def two_installs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Install, Install]:
    base = tmp_path_factory.mktemp("installs")
    short = _make_install(base / "a", "a", "ann")
    long = _make_install(base / ("b" * 60) / "a-much-longer" / "checkout-path", "with-a-long-name",
                         "bartholomew")
    builds = [_start_build(i) for i in (short, long)]
    for proc in builds:
        out, _ = proc.communicate(timeout=BUILD_TIMEOUT)
        assert proc.returncode == 0, out
    return short, long


def test_both_installs_build_every_output(two_installs: tuple[Install, Install]) -> None:
    for inst in two_installs:
        names = set(_outputs(inst))
        for arch in ("rv64", "rv32"):
            assert {f"{arch}/firmware.elf", f"{arch}/kernel.elf", f"{arch}/initrd.cpio",
                    f"{arch}/fs.img", f"{arch}/user/hello.elf", f"{arch}/kernel.dis",
                    f"{arch}/kernel.map", f"{arch}/gen/asm-offsets.h"} <= names


def test_every_output_is_the_same_bytes_in_both_installs(
        two_installs: tuple[Install, Install]) -> None:
    short, long = (_outputs(i) for i in two_installs)
    assert sorted(short) == sorted(long)
    assert [name for name in short if short[name] != long[name]] == []


def test_no_output_holds_a_path_of_the_machine(two_installs: tuple[Install, Install]) -> None:
    paths = {p for inst in two_installs for p in inst.machine_paths()}
    paths |= {str(zig_home()), str(REPO_ROOT), str(Path.home())}
    found = [(name, path) for inst in two_installs for name, data in _outputs(inst).items()
             for path in paths if path.encode() in data]
    assert found == []


def _compiles(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    compiles: list[str] = []
    real_run = toolchain.run_compiler

    def counting_run(cmd: list[str], what: str) -> str:
        if "-c" in cmd:
            compiles.append(Path(cmd[cmd.index("-c") + 1]).name)
        return real_run(cmd, what)

    monkeypatch.setattr(toolchain, "run_compiler", counting_run)
    return compiles


def test_an_object_cached_by_another_compiler_is_never_reused(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PRIVLAB_CACHE", str(tmp_path / "cache"))
    source = tmp_path / "one.c"
    source.write_text("int one(void) { return 1; }\n")
    opts = toolchain.CompileOptions(toolchain.RV64)
    compiles = _compiles(monkeypatch)
    first = toolchain.compile_object(source, opts)
    assert toolchain.compile_object(source, opts) == first and compiles == ["one.c"]
    real = toolchain.compiler_identity()
    monkeypatch.setattr(toolchain, "compiler_identity", lambda: real.replace("sha256=", "sha256=X"))
    assert toolchain.compile_object(source, opts) != first
    assert compiles == ["one.c", "one.c"]


def test_the_identity_is_the_pinned_release_and_its_binarys_hash() -> None:
    pinned = re.search(r'"ziglang==([^"]+)"', (REPO_ROOT / "pyproject.toml").read_text())
    assert pinned is not None
    identity = toolchain.compiler_identity()
    assert re.fullmatch(rf"ziglang {re.escape(pinned[1])} sha256=[A-Za-z0-9_-]{{43}}", identity)
    wheel_hash = identity.split("sha256=")[1]
    binary = (zig_home() / "zig").read_bytes()
    assert base64.urlsafe_b64encode(hashlib.sha256(binary).digest()).rstrip(b"=").decode() \
        == wheel_hash


def test_another_ziglang_release_is_refused_with_the_command_that_fixes_it(
        monkeypatch: pytest.MonkeyPatch) -> None:
    real = importlib.metadata.distribution("ziglang")
    real_distribution = importlib.metadata.distribution

    class OtherRelease:
        version = "0.16.0"

        def read_text(self, name: str) -> str | None:
            return real.read_text(name)

    monkeypatch.setattr(importlib.metadata, "distribution",
                        lambda name: OtherRelease() if name == "ziglang"
                        else real_distribution(name))
    with pytest.raises(BuildError) as info:
        toolchain.compiler_identity.__wrapped__()
    pinned = re.search(r'"(ziglang==[^"]+)"', (REPO_ROOT / "pyproject.toml").read_text())
    assert pinned is not None
    assert info.value.message == (f"privlab is pinned to {pinned[1]}, but ziglang 0.16.0 is "
                                  f"installed (pip install {pinned[1]})")
