"""Fill a wheel's `privlab/_data/`: the sources, the images built from them and the
native libraries, each with the manifest that lets an install use it unbuilt
(harness/build/prebuilt.py).

    python packaging/stage.py SOURCE_ROOT PACKAGE_DIR [--target T] [--unicorn DIR]

SOURCE_ROOT holds `kernel/`, `userland/` and `labs/` (a clone or an unpacked sdist);
PACKAGE_DIR is the `privlab` package being put into the wheel (setup.py's build_lib
copy), into which they are copied and against which everything is built, so the
digests are those of the files the wheel installs. `--target` is zig's target for the
native libraries (default: this machine's, glibc 2.17, manylinux2014's); `--unicorn`
is the `unicorn` package directory of the Unicorn wheel for that target (default: the
one this interpreter imports). Run by setup.py for every non-editable build.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import platform
import shutil
import sys
import tempfile
from pathlib import Path

TREES = ("kernel", "userland", "labs", "docs")   # docs: the labs' READMEs link there
JUNK = ("__pycache__", "*.pyc", "*.o", "*.elf", ".*")
ARCHES = ("rv64", "rv32")
OUTPUTS = ("firmware.elf", "kernel.elf", "initrd.cpio", "fs.img")


def default_target() -> str:
    machine = {"amd64": "x86_64", "arm64": "aarch64"}.get(platform.machine().lower(),
                                                           platform.machine().lower())
    return f"{machine}-linux-gnu.2.17"


def copy_sources(source: Path, data: Path) -> None:
    if data.exists():
        shutil.rmtree(data)
    for name in TREES:
        shutil.copytree(source / name, data / name, ignore=shutil.ignore_patterns(*JUNK))


def import_package(package: Path):  # type: ignore[no-untyped-def]
    """The `privlab` package at `package` (not any installed one)."""
    if package.name != "privlab":
        sys.exit(f"stage: {package}: the package directory must be named privlab")
    sys.path.insert(0, str(package.parent))
    for name in [n for n in sys.modules if n == "privlab" or n.startswith("privlab.")]:
        del sys.modules[name]
    privlab = importlib.import_module("privlab")
    if Path(privlab.__file__).resolve().parent != package.resolve():
        sys.exit(f"stage: imported privlab from {privlab.__file__}, not {package}")
    return privlab


def stage_images(data: Path) -> None:
    from privlab.build import prebuilt
    from privlab.build.images import build_images
    from privlab.paths import KERNEL_DIR, USERLAND_DIR

    key = prebuilt.digest(prebuilt.image_inputs(KERNEL_DIR, USERLAND_DIR))
    with tempfile.TemporaryDirectory() as tmp:
        for arch in ARCHES:
            built = build_images(arch, out_dir=Path(tmp) / "build" / arch, listings=False)
            out = data / "build" / arch
            (out / "user").mkdir(parents=True)
            for name in OUTPUTS:
                shutil.copyfile(built.out_dir / name, out / name)
            shutil.copytree(built.out_dir / "gen", out / "gen")
            for name, elf in sorted(built.users.items()):
                shutil.copyfile(elf, out / "user" / f"{name}.elf")
            prebuilt.write_manifest(out, key, {"users": sorted(built.users)})


def stage_native(data: Path, target: str, unicorn_root: Path) -> None:
    from privlab.build import prebuilt
    from privlab.native.clib import PACKAGED_CFLAGS, compile_library, packaged_key
    from privlab.native.library import HART_LIBRARY
    from privlab.trace.library import TRACE_LIBRARY

    out = data / "native"
    out.mkdir(parents=True)
    macos = "macos" in target
    libunicorn = unicorn_root / "lib" / ("libunicorn.2.dylib" if macos else "libunicorn.so.2")
    if not libunicorn.is_file():
        sys.exit(f"stage: no {libunicorn}")
    # Found beside the wheel's unicorn package wherever the venv is; the Python binding
    # has normally loaded it (by its soname) before the core is.
    rpath = "@loader_path/../../../unicorn/lib" if macos else "$ORIGIN/../../../unicorn/lib"
    digests = {}
    for lib in (HART_LIBRARY, TRACE_LIBRARY):
        link = [str(libunicorn), f"-Wl,-rpath,{rpath}"]
        compile_library(lib, out / lib.name, lib.gen_text(), PACKAGED_CFLAGS,
                        unicorn_root / "include", link, ["-target", target])
        digests[lib.name] = prebuilt.digest(packaged_key(lib, unicorn_root))
    (out / prebuilt.MANIFEST).write_text(json.dumps(
        {"format": prebuilt.FORMAT, "target": target, "libraries": digests}, indent=1) + "\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("source", type=Path)
    parser.add_argument("package", type=Path)
    parser.add_argument("--target", default=os.environ.get("PRIVLAB_WHEEL_TARGET")
                        or default_target())
    parser.add_argument("--unicorn", type=Path, default=os.environ.get("PRIVLAB_WHEEL_UNICORN"))
    args = parser.parse_args()
    args.source, args.package = args.source.resolve(), args.package.resolve()
    data = args.package / "_data"
    copy_sources(args.source, data)
    import_package(args.package)
    if args.unicorn is None:
        import unicorn

        args.unicorn = Path(unicorn.__file__).resolve().parent
    stage_images(data)
    stage_native(data, args.target, args.unicorn.resolve())


if __name__ == "__main__":
    main()
