"""Build the bundled firmware, kernel, user programs and initrd for one architecture.

`build_images(arch)` compiles `kernel/` and `userland/` with the ziglang clang (every
object cached by content, see toolchain.py), links them, packs the user programs into
an initrd and writes a disassembly (`X.dis`) and symbol map (`X.map`) beside each ELF.
Outputs go to `<repo>/build/<arch>/` (an installed wheel's are prebuilt in its
`_data/build/<arch>/`, and a build there goes to the cache, see prebuilt.py):

    firmware.elf   M-mode firmware (kernel/firmware/), at PLATFORM_RAM_BASE
    kernel.elf     S-mode kernel (kernel/), at PLATFORM_KERNEL_BASE
    user/NAME.elf  each user program (userland/NAME.c), at USER_BASE
    initrd.cpio    every user program, by NAME (cpio newc, harness/boot/initrd.py)
    fs.img         a file-system disk image with every user program as /NAME
                   (harness/fs/mkfs.py); the bundled system boots with it attached
    gen/           generated sources (harness/abi): riscv_gen.h, syscall_gen.h, usys.S,
                   syscalls.h, asm-offsets.h

When no input has changed since the last successful build (sizes and mtimes, see
stamp.py), the stamped outputs are returned without compiling or hashing anything.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from ..errors import BadInput, BuildError
from ..paths import KERNEL_DIR, REPO_ROOT, USERLAND_DIR
from . import prebuilt
from .arch import ARCHES, RV64, Arch
from .stamp import check_stamp, input_files, stamp_path, write_stamp

TYPE_CHECKING = False
if TYPE_CHECKING:
    from concurrent.futures import ThreadPoolExecutor

    from .toolchain import CompileOptions

# The compiler, the generated headers and the linker scripts are imported by the
# functions that build: a run whose images are stamped (every warm run) reads the stamp
# and boots, and loading the toolchain would be a tenth of its start-up.

__all__ = ["Images", "build_dir", "build_images", "build_user_programs"]


def _pool() -> ThreadPoolExecutor:
    """The compile pool. Imported here: a build answered by its stamp (every warm run)
    never needs concurrent.futures, nor the logging and queue modules it loads."""
    from concurrent.futures import ThreadPoolExecutor

    return ThreadPoolExecutor(_WORKERS)


_WORKERS = 4  # compiles are separate processes; the 2-core host still overlaps their I/O


@dataclass(frozen=True)
class Images:
    """Paths of everything one build produced."""

    arch: Arch
    firmware: Path
    kernel: Path
    users: dict[str, Path]
    initrd: Path
    out_dir: Path
    disk: Path           # fs.img


def build_dir(arch: Arch) -> Path:
    return REPO_ROOT / "build" / arch.name


def _sources(directory: Path, exclude: Iterable[str] = ()) -> list[Path]:
    skip = set(exclude)
    return sorted(p for p in directory.iterdir()
                  if p.suffix in (".c", ".S") and p.name not in skip)


def _compile_all(sources: Sequence[Path], opts: CompileOptions) -> list[Path]:
    """Compile in parallel; if any fail, one BuildError carrying every compiler message."""
    from .toolchain import compile_object

    def one(src: Path) -> Path | BuildError:
        try:
            return compile_object(src, opts)
        except BuildError as e:
            return e

    with _pool() as pool:
        results = list(pool.map(one, sources))
    errors = [r for r in results if isinstance(r, BuildError)]
    if errors:
        first = errors[0].message + (f" (and {len(errors) - 1} more)" if len(errors) > 1 else "")
        raise BuildError(first, "".join(e.output for e in errors))
    return [r for r in results if isinstance(r, Path)]


PrefixMap = tuple[tuple[Path, str], ...]


def _prefix_map(kernel_dir: Path, user_dir: Path, gen: Path, arch: Arch) -> PrefixMap:
    """Where each source directory is recorded in the ELFs: as in this repository's
    layout, wherever the tree (or a student's submission) really is."""
    return ((kernel_dir.resolve(), "kernel"), (user_dir.resolve(), "userland"),
            (gen.resolve(), f"build/{arch.name}/gen"))


def _build_firmware(kernel_dir: Path, gen: Path, out: Path, arch: Arch,
                    prefix_map: PrefixMap) -> Path:
    from .ldscript import with_platform
    from .toolchain import CompileOptions, link

    fw_dir = kernel_dir / "firmware"
    opts = CompileOptions(arch, include_dirs=(kernel_dir / "include", fw_dir, gen),
                          prefix_map=prefix_map)
    objs = _compile_all(_sources(fw_dir), opts)
    return link(objs, out / "firmware.elf", arch, with_platform(fw_dir / "firmware.ld", gen))


def _build_kernel(kernel_dir: Path, gen: Path, out: Path, arch: Arch,
                  prefix_map: PrefixMap) -> Path:
    from .ldscript import with_platform
    from .toolchain import CompileOptions, link

    opts = CompileOptions(arch, include_dirs=(kernel_dir / "include", kernel_dir, gen),
                          prefix_map=prefix_map)
    objs = _compile_all(_sources(kernel_dir, exclude=["asm-offsets.c"]), opts)
    return link(objs, out / "kernel.elf", arch, with_platform(kernel_dir / "kernel.ld", gen))


def _build_users(kernel_dir: Path, user_dir: Path, gen: Path, out: Path,
                 arch: Arch, prefix_map: PrefixMap,
                 programs: Sequence[Path] | None = None) -> dict[str, Path]:
    """Link each program (by default every `userland/NAME.c`) with the user library
    into `out/NAME.elf`."""
    from .ldscript import kernel_layout_value, with_platform
    from .toolchain import CompileOptions, link

    opts = CompileOptions(arch, include_dirs=(kernel_dir / "include", user_dir / "include", gen),
                          prefix_map=prefix_map)
    # div64.c (RV32's 64-bit division helpers) and string.c (memset, strlen, ...) are
    # the kernel's own files: one copy of each.
    lib_sources = [*_sources(user_dir / "lib"), kernel_dir / "div64.c", kernel_dir / "string.c",
                   gen / "usys.S"]
    programs = _sources(user_dir) if programs is None else list(programs)
    objs = _compile_all([*lib_sources, *programs], opts)
    lib, prog_objs = objs[:len(lib_sources)], objs[len(lib_sources):]
    script = with_platform(user_dir / "user.ld", gen, {
        "USER_BASE": kernel_layout_value(gen / "asm-offsets.h", "USER_BASE")})

    def link_one(item: tuple[Path, Path]) -> tuple[str, Path]:
        src, obj = item
        return src.stem, link([obj, *lib], out / f"{src.stem}.elf", arch, script)

    with _pool() as pool:
        return dict(pool.map(link_one, zip(programs, prog_objs, strict=True)))


def build_images(arch: Arch | str = RV64, *, kernel_dir: Path = KERNEL_DIR,
                 userland_dir: Path = USERLAND_DIR, out_dir: Path | None = None,
                 listings: bool = True,
                 progress: Callable[[str], None] | None = None) -> Images:
    """Build firmware, kernel, user programs, initrd and disk image; return their paths.

    Raises BuildError (with the compiler's output in `.output`) if anything fails to
    compile or link. `kernel_dir`/`userland_dir` default to the repository's own; a
    grader passes a student's submission instead.
    """
    if isinstance(arch, str):
        if arch not in ARCHES:
            raise BadInput(f"unknown architecture {arch!r} (choose from {', '.join(ARCHES)})")
        arch = ARCHES[arch]
    out = out_dir or build_dir(arch)
    inputs = input_files(kernel_dir, userland_dir)
    params = _params(arch, kernel_dir, userland_dir, out)
    stamped = check_stamp(out, params, inputs)
    if stamped is not None and (stamped["listings"] or not listings):
        return _images(arch, out, stamped["users"])
    if not listings and (users := prebuilt.images_in(out, kernel_dir, userland_dir)):
        images = _images(arch, out, users)   # a wheel's, built from these very sources
        write_stamp(out, params, inputs, _outputs(images, False),
                    {"users": users, "listings": False})
        return images
    if prebuilt.is_packaged(out):   # an installed package is never written to
        out = prebuilt.build_home(out)
        params = _params(arch, kernel_dir, userland_dir, out)
        stamped = check_stamp(out, params, inputs)
        if stamped is not None and (stamped["listings"] or not listings):
            return _images(arch, out, stamped["users"])
    images = _build(arch, kernel_dir, userland_dir, out, listings, progress)
    write_stamp(out, params, inputs, _outputs(images, listings),
                {"users": sorted(images.users), "listings": listings})
    return images


def _params(arch: Arch, kernel_dir: Path, userland_dir: Path, out: Path) -> dict[str, str]:
    return {"arch": arch.name, "kernel": str(kernel_dir.resolve()),
            "userland": str(userland_dir.resolve()), "out": str(out.resolve())}


def build_user_programs(sources: Sequence[Path], out_dir: Path, arch: Arch | str = RV64, *,
                        kernel_dir: Path = KERNEL_DIR,
                        userland_dir: Path = USERLAND_DIR) -> dict[str, Path]:
    """Build user programs kept outside `userland/` (a hidden test's own, say) as the
    test programs are built: with the user library of `userland_dir` and the headers,
    `string.c`, `div64.c` and system-call stubs of `kernel_dir`, linked at USER_BASE.
    Writes `out_dir/NAME.elf` for each `NAME.c` (or `.S`); returns them by NAME."""
    if isinstance(arch, str):
        if arch not in ARCHES:
            raise BadInput(f"unknown architecture {arch!r} (choose from {', '.join(ARCHES)})")
        arch = ARCHES[arch]
    names: dict[str, Path] = {}
    for src in sources:
        if not src.is_file():
            raise BadInput(f"{src}: no such file")
        if src.suffix not in (".c", ".S"):
            raise BadInput(f"{src}: not a C (.c) or assembly (.S) source file")
        if src.stem in names:
            raise BadInput(f"{src}: two programs named {src.stem!r}")
        names[src.stem] = src.resolve()
    from .generated import generate

    gen = out_dir / "gen"
    generate(gen, kernel_dir, arch)
    where = _prefix_map(kernel_dir, userland_dir, gen, arch)
    return _build_users(kernel_dir, userland_dir, gen, out_dir, arch, where,
                        programs=list(names.values()))


def _images(arch: Arch, out: Path, users: Sequence[str]) -> Images:
    return Images(arch, out / "firmware.elf", out / "kernel.elf",
                  {name: out / "user" / f"{name}.elf" for name in users},
                  out / "initrd.cpio", out, out / "fs.img")


def _outputs(images: Images, listings: bool) -> list[Path]:
    elves = [images.firmware, images.kernel, *images.users.values()]
    listed = [e.with_suffix(x) for e in elves for x in (".dis", ".map")] if listings else []
    gen = sorted(p for p in (images.out_dir / "gen").iterdir() if p.is_file())
    return [*elves, images.initrd, images.disk, *gen, *listed]


def _build(arch: Arch, kernel_dir: Path, userland_dir: Path, out: Path, listings: bool,
           progress: Callable[[str], None] | None) -> Images:
    """The full build: every step content-keyed, so unchanged steps cost a hash."""
    from ..boot.initrd import pack_initrd
    from ..fs.mkfs import make_image
    from .cache import write_if_changed
    from .generated import generate
    from .listing import write_listings

    stamp_path(out).unlink(missing_ok=True)
    gen = out / "gen"
    say = progress or (lambda _msg: None)
    say("generating syscall table and asm-offsets")
    generate(gen, kernel_dir, arch)
    where = _prefix_map(kernel_dir, userland_dir, gen, arch)
    say("firmware")
    firmware = _build_firmware(kernel_dir, gen, out, arch, where)
    say("kernel")
    kernel = _build_kernel(kernel_dir, gen, out, arch, where)
    say("userland")
    users = _build_users(kernel_dir, userland_dir, gen, out / "user", arch, where)
    programs = {name: path.read_bytes() for name, path in sorted(users.items())}
    initrd = write_if_changed(out / "initrd.cpio", pack_initrd(programs))
    disk = write_if_changed(out / "fs.img", make_image(programs))
    if listings:
        say("listings")
        elves = [firmware, kernel, *users.values()]
        with _pool() as pool:
            list(pool.map(write_listings, elves))
    return Images(arch, firmware, kernel, users, initrd, out, disk)
