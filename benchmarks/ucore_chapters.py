"""The uCore course's chapter kernels on privlab and on QEMU 7.2: the same kernel, the
same firmware, the same command line, timed in the same run. Goal: privlab on its
defaults no slower than QEMU on its defaults, the `make run` a student compares.

    python benchmarks/ucore_chapters.py [--firmware FW] [--timeout SECONDS]
                                        [--runs N] DIR [DIR...]

Each DIR is a built uCore-Tutorial-Code checkout of one chapter (branch `ch1` to `ch8`,
its user programs from uCore-Tutorial-Test: docs/other-kernels.md); the course cannot
ship with privlab, so you fetch and build your own. The chapter is the checkout's
branch, or the digit its directory's name ends with (`uc5`), or given as `N:DIR`.

Each chapter is built by its own Makefile. From chapter 5 on the first process is the
chapter's usertests (`INIT_PROC=chNb_usertest`) instead of its shell, so each run ends by
itself and nothing is typed: QEMU's console hands the shell "no key" as a byte when
nothing is typed yet, which makes a typed command a race. The command timed is the one
`make run` runs (`make -n run` prints it), with the emulator in QEMU's place:

- `privlab qemu`, privlab's defaults (`--icount-shift 5`, 32 ns an instruction);
- QEMU 7.2 with its defaults (the host's clock);
- QEMU 7.2 with `-icount shift=0` (one instruction a nanosecond);
- QEMU 7.2 with `-icount shift=5`, privlab's clock: the same guest work.

Both use the same firmware, FW (default Debian's OpenSBI, `apt-get install opensbi`),
since the chapters' own RustSBI 0.1.1 stops on QEMU 7.2 (docs/other-kernels.md). Each
run is timed from its start to its end (the kernel's last panic powers the machine off
through SBI); a chapter's disk, from chapter 6 on, is copied fresh before each run. The
lines that report a test's result (`OK`, `pass`, `fail`, numbers left out) must be the
same on privlab as on QEMU's defaults.
"""

from __future__ import annotations

import argparse
import re
import shlex
import shutil
import subprocess
import sys
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from common import privlab_cli

from privlab.pace import DEFAULT_ICOUNT_SHIFT

OPENSBI = Path("/usr/lib/riscv64-linux-gnu/opensbi/generic/fw_jump.bin")
EMULATOR = "UCORE_CHAPTERS_EMULATOR"
VERDICT = re.compile(rb"\b(ok|pass|passed|fail|failed)\b", re.IGNORECASE)
NUMBER = re.compile(rb"\d+")
FIRST_WITH_USERTESTS = 5


@dataclass(frozen=True)
class Chapter:
    number: int
    directory: Path

    @property
    def init_proc(self) -> str | None:
        """The first process: the chapter's usertests from chapter 5 on (before it,
        the kernel runs every program in turn by itself)."""
        return f"ch{self.number}b_usertest" if self.number >= FIRST_WITH_USERTESTS else None

    def make_args(self, firmware: Path) -> list[str]:
        out = [f"BOOTLOADER={firmware}"]
        if self.init_proc is not None:
            out.append(f"INIT_PROC={self.init_proc}")
        return out


@dataclass
class Timing:
    name: str
    seconds: float
    status: int
    output: bytes


def chapter_of(arg: str) -> Chapter:
    """`N:DIR`, or DIR whose git branch is chN or whose name ends with N."""
    number, sep, rest = arg.partition(":")
    given = int(number) if sep and number.isdigit() else None
    directory = Path(rest if given is not None else arg)
    if not (directory / "Makefile").is_file():
        raise SystemExit(f"ucore_chapters: {directory}: no Makefile (a chapter's "
                         "uCore-Tutorial-Code checkout?)")
    if given is not None:
        return Chapter(given, directory)
    branch = subprocess.run(["git", "-C", str(directory), "rev-parse", "--abbrev-ref", "HEAD"],
                            capture_output=True, text=True, check=False).stdout.strip()
    found = re.fullmatch(r"ch([1-8])", branch) or re.search(r"([1-8])$", directory.name)
    if found is None:
        raise SystemExit(f"ucore_chapters: {arg}: which chapter? (its branch is not chN and "
                         "its name ends with no digit: say N:DIR)")
    return Chapter(int(found.group(1)), directory)


def command_line(chapter: Chapter, firmware: Path) -> list[str]:
    """Build what the chapter's `make run` needs (its kernel, and its disk from chapter
    6 on: `make run` with `true` in QEMU's place), and return what `make run` then
    runs, QEMU's name left as EMULATOR."""
    make = ["make", *chapter.make_args(firmware)]
    built = subprocess.run([*make, "run", "QEMU=true"], cwd=chapter.directory,
                           capture_output=True, check=False)
    if built.returncode != 0:
        raise SystemExit(f"ucore_chapters: chapter {chapter.number}: the build failed:\n"
                         f"{built.stdout.decode(errors='replace')[-2000:]}"
                         f"{built.stderr.decode(errors='replace')[-2000:]}")
    dry = subprocess.run([*make, "-n", "run", f"QEMU={EMULATOR}"], cwd=chapter.directory,
                         capture_output=True, text=True, check=False)
    lines = [line for line in dry.stdout.splitlines() if line.startswith(EMULATOR)]
    if not lines:
        raise SystemExit(f"ucore_chapters: chapter {chapter.number}: `make -n run` runs no "
                         f"$(QEMU):\n{dry.stdout}{dry.stderr}")
    return shlex.split(lines[-1])[1:]


def fresh_disk(directory: Path) -> None:
    """A chapter with a disk runs on nfs/fs-copy.img, made from nfs/fs.img: the same
    image at the start of every run."""
    image = directory / "nfs" / "fs.img"
    if image.is_file():
        shutil.copyfile(image, directory / "nfs" / "fs-copy.img")


def time_run(name: str, cmd: list[str], directory: Path, timeout: float) -> Timing:
    fresh_disk(directory)
    start = time.perf_counter()
    try:
        proc = subprocess.run(cmd, cwd=directory, stdin=subprocess.DEVNULL,
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              timeout=timeout, check=False)
    except subprocess.TimeoutExpired as e:
        return Timing(name, time.perf_counter() - start, -1, e.output or b"")
    return Timing(name, time.perf_counter() - start, proc.returncode, proc.stdout)


def verdicts(output: bytes) -> Counter[bytes]:
    """The lines that report a test's result, their numbers (times, pids) left out."""
    return Counter(NUMBER.sub(b"N", line.strip()) for line in output.splitlines()
                   if VERDICT.search(line))


def machines(args: list[str]) -> list[tuple[str, list[str]]]:
    shift = str(DEFAULT_ICOUNT_SHIFT)
    return [("privlab defaults", [*privlab_cli(), "qemu", *args]),
            ("QEMU 7.2 defaults", ["qemu-system-riscv64", *args]),
            ("QEMU 7.2 -icount shift=0", ["qemu-system-riscv64", "-icount", "shift=0", *args]),
            (f"QEMU 7.2 -icount shift={shift}",
             ["qemu-system-riscv64", "-icount", f"shift={shift}", *args])]


def measure(chapter: Chapter, firmware: Path, runs: int, timeout: float) -> bool:
    """Time the chapter on each machine (the run in the middle of `runs`: the median
    of an odd number), print the ratios; True if privlab meets the goal and reports the
    same results as QEMU."""
    args = command_line(chapter, firmware)
    print(f"chapter {chapter.number} ({chapter.directory}), first process "
          f"{chapter.init_proc or 'none: the kernel runs each program'}:")
    results: dict[str, Timing] = {}
    for name, cmd in machines(args):
        timings = [time_run(name, cmd, chapter.directory, timeout) for _ in range(runs)]
        best = sorted(timings, key=lambda t: t.seconds)[len(timings) // 2]
        results[name] = best
        ended = "powered off" if best.status == 0 else \
            "TIMED OUT" if best.status < 0 else f"exit {best.status}"
        print(f"  {name:<26} {best.seconds:7.2f} s  {ended}")
    ours, theirs = results["privlab defaults"], results["QEMU 7.2 defaults"]
    for name, other in results.items():
        if other is not ours and other.status == 0:
            print(f"  privlab / {name}: {ours.seconds / other.seconds:.2f}x")
    ok = ours.status == 0 and theirs.status == 0
    mine, qemu = verdicts(ours.output), verdicts(theirs.output)
    if ok and mine != qemu:
        ok = False
        print("  the results differ: privlab only:", sorted((mine - qemu).elements()),
              "QEMU only:", sorted((qemu - mine).elements()))
    met = ok and ours.seconds <= theirs.seconds
    print(f"  goal: privlab's defaults no slower than QEMU's defaults: "
          f"{'meets' if met else 'MISSES'}")
    return met


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("chapters", nargs="+", metavar="DIR", help="a built chapter ([N:]DIR)")
    p.add_argument("--firmware", type=Path, default=OPENSBI, metavar="FW",
                   help=f"the firmware both machines boot (default {OPENSBI})")
    p.add_argument("--runs", type=int, default=3, metavar="N",
                   help="runs of each; the one in the middle is shown (default 3)")
    p.add_argument("--timeout", type=float, default=300, help="seconds per run")
    args = p.parse_args()
    if args.runs < 1:
        p.error("--runs must be at least 1")
    if shutil.which("qemu-system-riscv64") is None:
        print("ucore_chapters: qemu-system-riscv64 is not installed", file=sys.stderr)
        return 2
    if not args.firmware.is_file():
        print(f"ucore_chapters: {args.firmware}: no such file (apt-get install opensbi, "
              "or --firmware FW)", file=sys.stderr)
        return 2
    chapters = [chapter_of(a) for a in args.chapters]
    met = [measure(c, args.firmware.resolve(), args.runs, args.timeout) for c in chapters]
    return 0 if all(met) else 1


if __name__ == "__main__":
    sys.exit(main())
