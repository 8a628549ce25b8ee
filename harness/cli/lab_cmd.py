"""`privlab lab`: the course's labs.

  privlab lab list                  every lab with its number, title and solution files
  privlab lab handout LAB -o DIR    the student starter: kernel/ and userland/ with every
                                    lab's marked solutions removed, and LAB's README
  privlab lab handout all --public -o DIR
                                    the checkout students may see: the same, plus labs/
                                    without any hidden/ and the rest of privlab, no tests/
  privlab lab handout LAB --keep L -o DIR
                                    the same, keeping lab L's solution (repeatable; e.g.
                                    earlier labs students have done, or --keep-required:
                                    the labs LAB's lab.toml requires)
  privlab lab check LAB             every direction: the reference scores 100%; the
                                    handout with LAB's solution (and its prerequisites')
                                    scores 100%; the handout alone builds, boots and
                                    scores exactly the base-system points
                                    (--hidden DIR: with these hidden tests)
  privlab lab build-user SRC.c... -o DIR
                                    build a hidden test's own user programs against
                                    privlab's user library, as the test programs are
"""

from __future__ import annotations

import argparse
from pathlib import Path

from .helplayout import HelpLayout

__all__ = ["register"]


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("lab", help="list labs, make student handouts",
                       description=__doc__, formatter_class=HelpLayout)
    actions = p.add_subparsers(dest="action", required=True)
    actions.add_parser("list", help="list the labs").set_defaults(func=_list)
    h = actions.add_parser("handout", help="write a lab's student starter")
    h.add_argument("lab", nargs="+", help="lab name(s) or number(s); 'all' for every lab")
    h.add_argument("-o", "--output", metavar="DIR", required=True, help="new directory")
    h.add_argument("--public", action="store_true",
                   help="the whole checkout students may see (for a Classroom runner to "
                        "clone): no hidden/ directory, no tests/, every solution removed")
    h.add_argument("--keep", metavar="LAB", action="append", default=[],
                   help="keep this lab's solution in the handout (repeatable)")
    h.add_argument("--keep-required", action="store_true",
                   help="keep the solutions of the labs each handed-out lab requires")
    h.set_defaults(func=_handout)
    c = actions.add_parser("check", help="check a lab's reference and handout")
    c.add_argument("lab", nargs="+", help="lab name(s) or number(s); 'all' for every lab")
    c.add_argument("--hidden", metavar="DIR", type=Path,
                   help="hidden tests to grade with (default: the lab's own hidden/)")
    c.set_defaults(func=_check)
    b = actions.add_parser("build-user", help="build a hidden test's own user programs")
    b.add_argument("sources", nargs="+", metavar="SRC", type=Path,
                   help="user programs (.c or .S), each one program NAME.elf")
    b.add_argument("-o", "--output", metavar="DIR", type=Path, required=True,
                   help="where NAME.elf go (created if need be)")
    b.add_argument("--arch", choices=["rv64", "rv32"], default="rv64",
                   help="target architecture (default: rv64)")
    b.set_defaults(func=_build_user)


def _list(args: argparse.Namespace) -> int:
    from ..grade.labs import all_labs

    for lab in all_labs():
        needs = f"; requires {', '.join(lab.requires)}" if lab.requires else ""
        print(f"{lab.number:>2}  {lab.name:<10} {lab.title}  "
              f"({', '.join(lab.solution_files)}{needs})")
    return 0


def _handout(args: argparse.Namespace) -> int:
    from ..course.handout import make_handout
    from ..grade.labs import all_labs, find_lab, prerequisites

    labs = all_labs() if args.lab == ["all"] else [find_lab(name) for name in args.lab]
    keep = [find_lab(name).name for name in args.keep]
    if args.keep_required:
        keep += [p.name for lab in labs for p in prerequisites(lab)]
    out = Path(args.output)
    changed = make_handout(labs, out, public=args.public, keep=keep)
    kept = f", solutions of {', '.join(dict.fromkeys(keep))} kept" if keep else ""
    print(f"handout for {', '.join(lab.name for lab in labs)} in {out}: "
          f"solutions removed from {', '.join(changed) or 'nothing'}{kept}")
    return 0


def _check(args: argparse.Namespace) -> int:
    from ..course.labcheck import check_lab
    from ..grade.labs import all_labs, find_lab

    labs = all_labs() if args.lab == ["all"] else [find_lab(name) for name in args.lab]
    bad = 0
    for lab in labs:
        check = check_lab(lab, hidden=args.hidden)
        print(f"{lab.name}: reference {check.reference.points_line()}, "
              f"handout+{'+'.join(check.kept)} {check.solved.points_line()}, "
              f"handout {check.handout.points_line()}: {'ok' if check.ok else 'PROBLEMS'}",
              flush=True)
        for problem in check.problems:
            print(f"  {problem}")
        bad += not check.ok
    return 1 if bad else 0


def _build_user(args: argparse.Namespace) -> int:
    from ..build.images import build_user_programs

    built = build_user_programs(args.sources, args.output, args.arch)
    for path in built.values():
        print(path)
    return 0
