"""`privlab build`: compile the firmware, kernel and user programs (cached by content).

A compiler error prints the compiler's output verbatim on stderr, then one
``privlab: ...`` line, and exits with status 1.
"""

from __future__ import annotations

import argparse
import sys
import time
from typing import Any

__all__ = ["register"]


def register(subparsers: Any) -> None:
    p: argparse.ArgumentParser = subparsers.add_parser(
        "build", help="build firmware, kernel, user programs, initrd and disk image",
        description="Build kernel/ and userland/ into build/<arch>/, with a disassembly "
                    "(.dis) and symbol map (.map) beside each ELF: those of the project "
                    "around the working directory (a directory with a kernel/ like "
                    "privlab's, such as a lab handout), else privlab's bundled ones.")
    p.add_argument("--arch", choices=["rv64", "rv32", "all"], default="rv64",
                   help="target architecture (default: rv64)")
    p.add_argument("--no-listings", action="store_true",
                   help="skip the .dis/.map files")
    p.add_argument("--src", metavar="DIR",
                   help="build DIR's kernel/ and userland/ into DIR/build/<arch>/")
    p.add_argument("-q", "--quiet", action="store_true", help="print nothing on success")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    # Imported here: every command's parser is built on each run (harness/cli/main.py).
    from ..build.images import build_images
    from ..build.toolchain import ARCHES
    from ..project import sources_for

    sources = sources_for(args.src)
    said = sources.announcement()
    if said and not args.quiet:
        print(said, file=sys.stderr, flush=True)
    arches = list(ARCHES) if args.arch == "all" else [args.arch]
    for arch in arches:
        start = time.perf_counter()
        # A BuildError's compiler output is printed by the command line (main.py).
        images = build_images(arch, kernel_dir=sources.kernel, userland_dir=sources.userland,
                              out_dir=sources.out_dir(arch), listings=not args.no_listings)
        if not args.quiet:
            took = time.perf_counter() - start
            print(f"{arch}: {images.out_dir} ({len(images.users)} user programs, "
                  f"{took:.2f} s)")
            for path in (images.firmware, images.kernel, images.initrd, images.disk):
                print(f"  {path.relative_to(images.out_dir)}")
    return 0
