"""Building a submission for grading.

The submission's `kernel/` provides the firmware and the kernel. The user programs the
tests run (the lab test programs among them) are the grader's own: built from its
`userland/` *and* its reference kernel's shared sources (`kernel/include/`,
`kernel/string.c`, `kernel/div64.c`, `kernel/syscall.tbl`), so no code of the
submission runs inside them and a student cannot make a test program print its token.

Builds happen in a *staging slot*: a fixed directory under the build cache that the
sources are copied into. The object cache keys on compiler flags, which include the
include directories' paths, so building every submission at the same path lets
unchanged files hit the cache: a class of submissions that differ in a few files
compiles only those files. A slot is held with an exclusive file lock, so parallel
graders (threads or processes) each take their own.

The copy takes regular files and directories inside the submission's `kernel/` only,
and never reads through a link: a symbolic link that leads outside `kernel/`, or a
regular file with a hard link outside it, refuses the whole submission with one line
in the report (it scores 0: the grader's own files, `/proc` and a checkout's `.git`
are all outside); a symbolic link to a file inside is copied as that file; anything
else (a link to a directory, a loop, a dangling link, a pipe or device, an unreadable
or huge file) is left out and named in the build test's output.

Every build starts from an empty output directory. The compiler runs in a child
process with limits (wall clock, CPU, memory, file size:
harness/course/confinement.py), so a build that never ends or grows without bound is a
failed build, not a hung grader. That child seals itself with Landlock
(harness/course/sandbox.py) before compiling anything: it reads only the staged
submission, the published user sources and the toolchain, and writes only its output
and the sealed cache (`<cache>/sealed-build`), so no source can include or `.incbin`
the reference, the hidden tests or anything else of the grader's. A file the sandbox
refused is named first in the build's output.
"""

from __future__ import annotations

import fcntl
import json
import os
import re
import shutil
import stat
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from ..build.cache import cache_root
from ..children import kill, supervised
from ..errors import PrivlabError
from ..grade.model import shown
from ..paths import KERNEL_DIR, USERLAND_DIR
from .confinement import BUILD_LIMITS, child_environment, python_command
from .sandbox import (
    UNSEALED_ENV,
    SandboxError,
    SandboxPolicy,
    landlock_abi,
    restrict_self,
    why_unavailable,
)

if TYPE_CHECKING:
    from ..grade.under_test import KernelImages

__all__ = ["BUILD_TIMEOUT", "BuildResult", "build_submission", "copy_submission",
           "links_outside", "refusal", "staging_slot"]

MAX_SLOTS = 64
BUILD_TIMEOUT = 300            # seconds; a clean build takes ~6 s, a cached one well under 1
MAX_FILE_BYTES = 4 << 20       # larger files are left out of the staged copy
MAX_FILES = 5000               # entries copied from one submission at most
IGNORED_NAMES = frozenset({".git", "__pycache__"})
IGNORED_SUFFIXES = (".o", ".elf")


@dataclass(frozen=True)
class BuildResult:
    """Images, or the compiler's output when the build failed. `skipped` names what
    the staged copy left out of the submission (one line each)."""

    images: KernelImages | None
    output: str
    seconds: float
    out_dir: Path
    skipped: tuple[str, ...] = ()

    @property
    def ok(self) -> bool:
        return self.images is not None


SLOT_WAIT_SECONDS = 3600.0    # how long a grading waits for a free slot before failing


@contextmanager
def staging_slot(wait: float = SLOT_WAIT_SECONDS) -> Iterator[Path]:
    """An exclusive staging directory, `<cache>/grade-stage/<n>`, held until exit (it
    exists when handed out). With all MAX_SLOTS held, waits for one (up to `wait`
    seconds, then raises PrivlabError: a grading never silently goes without)."""
    root = cache_root() / "grade-stage"
    root.mkdir(parents=True, exist_ok=True)
    deadline = time.monotonic() + wait
    while True:
        for n in range(MAX_SLOTS):
            lock_path = root / f"{n}.lock"
            fd = os.open(lock_path, os.O_CREAT | os.O_RDWR, 0o644)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                os.close(fd)
                continue
            try:
                slot = root / str(n)
                slot.mkdir(exist_ok=True)
                yield slot
            finally:
                fcntl.flock(fd, fcntl.LOCK_UN)
                os.close(fd)
            return
        if time.monotonic() >= deadline:
            raise PrivlabError(f"all {MAX_SLOTS} grading slots under {root} stayed busy "
                               f"for {wait:g} s")
        time.sleep(0.2)


def _kind(mode: int) -> str:
    if stat.S_ISFIFO(mode):
        return "a named pipe"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    return "not a regular file"


_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def _shown(name: str) -> str:
    """A file name for a one-line message: bytes that are not UTF-8 and control
    characters (a newline, say) as `\\xNN`."""
    name = shown(name)
    return _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", name)


def _walk(src: Path) -> Iterator[os.DirEntry[str]]:
    """Every entry under `src` the staged copy looks at, never through a link."""
    pending = [src]
    while pending:
        try:
            with os.scandir(pending.pop()) as it:
                entries = sorted(it, key=lambda e: e.name)
        except OSError:
            continue
        for entry in entries:
            if entry.name in IGNORED_NAMES or entry.name.endswith(IGNORED_SUFFIXES):
                continue
            yield entry
            if entry.is_dir(follow_symlinks=False):
                pending.append(Path(entry.path))


def links_outside(src: Path, *, label: str = "kernel") -> list[str]:
    """The links under `src` that lead outside it, one `label/PATH: why` line each: a
    symbolic link whose target (resolved, every link on the way) exists and is not
    under `src` (a dangling link or a loop leaks nothing: the copy leaves it out),
    and a regular file whose hard links are not all under `src`. Nothing is read
    through a link."""
    root = src.resolve()
    found: list[str] = []
    seen: dict[tuple[int, int], int] = {}
    hard: dict[tuple[int, int], tuple[str, int]] = {}
    for entry in _walk(src):
        rel = f"{label}/{_shown(str(Path(entry.path).relative_to(src)))}"
        try:
            info = entry.stat(follow_symlinks=False)
        except OSError:
            continue
        if stat.S_ISLNK(info.st_mode):
            target = Path(os.path.realpath(entry.path))   # a loop or dangling: as far as it goes
            if not target.is_relative_to(root) and os.path.lexists(target):
                found.append(f"{rel}: a symbolic link to {_shown(os.readlink(entry.path))}, "
                             "outside the submission")
        elif stat.S_ISREG(info.st_mode) and info.st_nlink > 1:
            key = (info.st_dev, info.st_ino)
            seen[key] = seen.get(key, 0) + 1
            hard.setdefault(key, (rel, info.st_nlink))
    for key, (rel, links) in hard.items():
        if seen[key] < links:
            found.append(f"{rel}: a hard link to a file outside the submission")
    return found


def refusal(refused: list[str]) -> str:
    """The one line a submission with links leading outside it gets in its report."""
    more = f" (and {len(refused) - 1} more)" if len(refused) > 1 else ""
    return (f"refused: {refused[0]}{more}; the grader stages only the files and "
            "directories inside the submission")


def _copy_file(path: str, target: Path) -> None:
    """Copy one regular file, opened without following a link (a file swapped for a
    link after the walk looked at it is not read)."""
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    with open(fd, "rb") as f_in, open(target, "wb") as f_out:
        shutil.copyfileobj(f_in, f_out)


def copy_submission(src: Path, dst: Path, *, label: str = "kernel") -> list[str]:
    """Copy the regular files and directories under `src` to `dst` (replacing it).
    Returns what was left out, as `label/PATH: why` lines. A symbolic link to a file
    under `src` is copied as that file (read at its own path, not through the link);
    links leading outside `src` are `links_outside`'s to refuse, and are left out
    here. Never follows a link to a directory, so no tree can make the copy loop or
    escape the submission."""
    if dst.exists() or dst.is_symlink():
        shutil.rmtree(dst)
    root = src.resolve()
    skipped: list[str] = []
    copied = 0
    pending: list[tuple[Path, Path, str]] = [(src, dst, label)]
    while pending:
        source, target, rel = pending.pop()
        target.mkdir(parents=True, exist_ok=True)
        try:
            with os.scandir(source) as it:
                entries = sorted(it, key=lambda e: e.name)
        except OSError as e:
            skipped.append(f"{rel}/: cannot be read ({e.strerror or e})")
            continue
        for entry in entries:
            name, path = entry.name, f"{rel}/{_shown(entry.name)}"
            if name in IGNORED_NAMES or name.endswith(IGNORED_SUFFIXES):
                continue
            if copied >= MAX_FILES:
                skipped.append(f"{rel}/: more than {MAX_FILES} files; the rest are left out")
                return skipped
            try:
                link = entry.is_symlink()
                real = Path(os.path.realpath(entry.path)) if link else Path(entry.path)
                info = os.stat(real, follow_symlinks=link)    # a loop, dangling: OSError
                if link and not real.is_relative_to(root):
                    skipped.append(f"{path}: a symbolic link leading outside the submission")
                    continue
                if stat.S_ISDIR(info.st_mode):
                    if link:
                        skipped.append(f"{path}: a symbolic link to a directory (not followed)")
                    else:
                        pending.append((Path(entry.path), target / name, path))
                elif not stat.S_ISREG(info.st_mode):
                    skipped.append(f"{path}: {_kind(info.st_mode)}")
                elif info.st_size > MAX_FILE_BYTES:
                    skipped.append(f"{path}: larger than {MAX_FILE_BYTES >> 20} MiB")
                else:
                    _copy_file(str(real), target / name)
                    copied += 1
            except OSError as e:
                why = e.strerror or str(e)
                if link:
                    why = f"a symbolic link that leads nowhere ({why})"
                skipped.append(f"{path}: {why}")
    return skipped


def _child_main(request_json: str) -> int:
    """`python -m privlab.course.submission_build REQUEST`: the submission's build, in the child
    process the grader watches. Seals itself first (request["sandbox"], a SandboxPolicy;
    absent only when the grader was told to build unsealed), after importing every
    module the build needs: once sealed, the grader's checkout is unreadable. Writes
    {"ok": true, "firmware", "kernel"} or {"ok": false, "message", "output"} to
    request["result"]."""
    from ..build.images import build_images
    from ..build.toolchain import compiler_identity, zig_home
    from ..errors import BuildError

    request = json.loads(request_json)
    result: dict[str, object]
    try:
        _preload()
        zig_home()
        compiler_identity()
        if request.get("sandbox") is not None:
            restrict_self(SandboxPolicy.from_json(request["sandbox"]))
        images = build_images(request["arch"], kernel_dir=Path(request["kernel"]),
                              userland_dir=Path(request["userland"]),
                              out_dir=Path(request["out"]), listings=False)
    except BuildError as e:
        result = {"ok": False, "message": e.message, "output": e.output}
    except PrivlabError as e:
        result = {"ok": False, "message": str(e), "output": ""}
    else:
        result = {"ok": True, "firmware": str(images.firmware), "kernel": str(images.kernel)}
    Path(request["result"]).write_text(json.dumps(result))
    return 0


def _preload() -> None:
    """Import every module a build may import lazily (the build's packages, the
    encodings a subprocess's text mode needs, the compile pool that images.py loads
    only when it compiles), while the checkout and Python's own library are still
    readable."""
    import concurrent.futures.thread  # noqa: F401
    import encodings.idna
    import encodings.utf_8  # noqa: F401
    import importlib
    import pkgutil

    root = __package__.rpartition(".")[0]
    for package in (f"{root}.{p}" for p in ("abi", "boot", "build", "fs")):
        module = importlib.import_module(package)
        for info in pkgutil.walk_packages(module.__path__, f"{package}."):
            importlib.import_module(info.name)


def sealed_cache() -> Path:
    """The build cache of sealed builds, `<cache>/sealed-build`: content-addressed like
    the grader's own (so shared by every slot), but holding only what submissions'
    builds made: the grader's own objects (the reference's among them) stay out of
    the sealed build's reach."""
    return cache_root() / "sealed-build"


def _policy(slot: Path, userland: Path, out: Path) -> SandboxPolicy:
    """What a submission's build may read: its staged copy, the published user
    sources and the toolchain; and write: its output, its result, the sealed cache
    and a temporary directory."""
    from ..build.toolchain import zig_home

    # No /usr, /lib or Python's own directories (a checkout or an installed package
    # could lie below any of them), no /proc (the grader's environment and command
    # line are there): zig is one static binary, and the build imports every module
    # it needs before it is sealed (_preload).
    read = (slot / "kernel", userland.resolve(), zig_home())
    write: tuple[Path, ...] = (out.resolve(), (slot / "result").resolve(), sealed_cache(),
                               (slot / "tmp").resolve())
    for path in write:
        path.mkdir(parents=True, exist_ok=True)
    write += (Path("/dev/null"),)
    return SandboxPolicy(read, write)


def _sealed_env() -> dict[str, str]:
    cache = sealed_cache()
    return child_environment({"ZIG_GLOBAL_CACHE_DIR": str(cache / "zig"),
                              "ZIG_LOCAL_CACHE_DIR": str(cache / "zig")}, cache=cache)


def sandbox_for(slot: Path, userland: Path, out: Path) -> SandboxPolicy | None:
    """The build's policy; None when the grader was told to build unsealed
    ($PRIVLAB_UNSEALED_BUILD=1). Raises SandboxError when Landlock is missing and
    nobody said so: a grader that cannot seal a build refuses to grade."""
    if not require_seal():
        return None
    return _policy(slot, userland, out)


def require_seal() -> bool:
    """Whether builds are sealed: True when Landlock is here, False when the grader was
    told to build unsealed ($PRIVLAB_UNSEALED_BUILD=1); else SandboxError (one line,
    naming why), which `privlab grade` reports before grading anything."""
    if os.environ.get(UNSEALED_ENV) == "1":
        return False
    if landlock_abi() == 0:
        raise SandboxError(f"cannot seal the submission's build: {why_unavailable()}; "
                           f"set {UNSEALED_ENV}=1 to grade without the sandbox (a "
                           "submission's build can then read every file the grader can)")
    return True


def _run_build(request: dict[str, object],
               timeout: float) -> tuple[dict[str, object] | None, str]:
    """Run the child; its result, or None and why."""
    result_path = Path(str(request["result"]))
    result_path.unlink(missing_ok=True)
    slot = Path(str(request["out"])).parent
    env = _sealed_env() if request.get("sandbox") is not None else child_environment(
        cache=cache_root())
    env["TMPDIR"] = str(slot / "tmp")
    cmd = python_command(sys.executable, __name__, json.dumps(request))
    def start() -> subprocess.Popen[bytes]:
        return subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, start_new_session=True, env=env,
                                cwd=slot, preexec_fn=BUILD_LIMITS.preexec())

    with supervised(start, group=True) as proc:   # interrupted: no compiler left behind
        try:
            printed, _ = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            kill(proc, group=True)
            proc.communicate()
            return None, (f"the build did not finish within {timeout:g} seconds and was "
                          "stopped (does a source include a device, such as /dev/zero, or "
                          "an endless file?)")
    try:
        data: dict[str, object] = json.loads(result_path.read_text())
    except (OSError, ValueError):
        why = BUILD_LIMITS.why(proc.returncode)
        if why is not None:
            return None, f"the build was stopped: {why}"
        tail = printed.decode(errors="replace")[-3000:]
        return None, f"the build process ended without a result (status {proc.returncode}):\n{tail}"
    return data, ""


def _trusted_programs(slot: Path, arch: str, userland: Path,
                      reference: Path) -> dict[str, Path]:
    """The user programs the tests run: `userland` built with the `reference` kernel's
    shared sources (in the slot, so the object cache hits from the second grading on)."""
    from ..build.images import build_images
    from ..errors import BuildError

    try:
        images = build_images(arch, kernel_dir=reference, userland_dir=userland,
                              out_dir=slot / "trusted", listings=False)
    except BuildError as e:
        raise PrivlabError(f"the grader's own sources ({reference}, {userland}) did not "
                           f"build: {e.message}\n{e.output}".rstrip()) from e
    return dict(images.users)


def _empty(*directories: Path) -> None:
    """Each directory, emptied (made if missing): a build starts from nothing an earlier
    grading in this slot left (its kernel.elf above all, which a sealed build could
    otherwise `.incbin`: the reference's, when a Gradescope image warmed the cache by
    grading it)."""
    for directory in directories:
        if directory.is_symlink() or directory.is_file():
            directory.unlink()
        elif directory.exists():
            shutil.rmtree(directory)
        directory.mkdir(parents=True)


def build_submission(submission: Path, slot: Path, *, arch: str = "rv64",
                     userland: Path = USERLAND_DIR, reference: Path = KERNEL_DIR,
                     timeout: float = BUILD_TIMEOUT) -> BuildResult:
    """Build `submission/kernel` in `slot` (within `timeout` seconds), and the user
    programs of `userland` against the `reference` kernel's shared sources. Never
    raises for a compile error (the result carries the output, with paths pointing
    back into the submission); a problem with the grader's own sources raises
    PrivlabError."""
    start = time.perf_counter()
    kernel_src = submission / "kernel"
    out = slot / "out"
    slot.mkdir(parents=True, exist_ok=True)

    def failed(text: str, skipped: tuple[str, ...] = ()) -> BuildResult:
        return BuildResult(None, shown(text), time.perf_counter() - start, out, skipped)

    if not kernel_src.is_dir():
        return failed(f"{submission}: no kernel/ directory to build")
    refused = links_outside(kernel_src)
    if refused:
        return failed(refusal(refused))
    skipped = tuple(copy_submission(kernel_src, slot / "kernel"))
    _empty(out, slot / "result", slot / "tmp")
    policy = sandbox_for(slot, userland, out)
    request: dict[str, object] = {
        "arch": arch, "kernel": str(slot / "kernel"), "userland": str(userland),
        "out": str(out), "result": str(slot / "result" / "build-result.json"),
        "sandbox": None if policy is None else policy.to_json()}
    data, why = _run_build(request, timeout)
    if data is None:
        return failed(why, skipped)
    if not data.get("ok"):
        message, output = str(data.get("message", "")), str(data.get("output", ""))
        text = output or message
        headline = BUILD_LIMITS.headline(text)
        if headline is not None:
            return failed(headline, skipped)
        if policy is not None:
            text = denied_reads(text, policy) + text
        text = text.replace(str(slot / "kernel"), str(kernel_src))
        return failed(text.rstrip() or message, skipped)
    from ..grade.under_test import KernelImages

    users = _trusted_programs(slot, arch, userland, reference)
    built = KernelImages(Path(str(data["firmware"])), Path(str(data["kernel"])), users,
                         reference / "syscall.tbl", submission.resolve())
    return BuildResult(built, "", time.perf_counter() - start, out, skipped)


_QUOTED_PATH = re.compile(r"""['"<](/[^'"<>\n]+)['">]""")


def denied_reads(output: str, policy: SandboxPolicy) -> str:
    """One line for each file the compiler's errors name (`#include`, `.incbin`, in
    quotes) that lies outside the build's allowed roots and exists for the grader:
    the sandbox refused it, and the student should read why ("the build tried to read
    /path, outside the submission"). "" if there is none."""
    allowed = [*policy.read, *policy.write]
    found: list[str] = []
    for line in output.splitlines():
        if "error" not in line:
            continue
        for m in _QUOTED_PATH.finditer(line):
            path = m.group(1)
            if path in found or any(Path(path).is_relative_to(root) for root in allowed):
                continue
            with suppress(OSError):
                if os.path.exists(path):
                    found.append(path)
    return "".join(f"the build tried to read {path}, outside the submission (refused: a "
                   "submission's build can read only the submission, the toolchain and the "
                   "published headers)\n" for path in found)


if __name__ == "__main__":
    sys.exit(_child_main(sys.argv[1]))
