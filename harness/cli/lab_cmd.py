"""`privlab lab`: the course's labs.

  privlab lab list                  every lab with its number, title and solution files
  privlab lab handout LAB -o DIR    the student starter: kernel/ and userland/ with LAB's
                                    marked solutions removed, and the lab's README
  privlab lab check LAB             both directions: the reference scores 100%, the
                                    handout builds, boots, scores 0 on the lab's tests
                                    and full marks on the base-system tests
"""

from __future__ import annotations

import argparse
from pathlib import Path

__all__ = ["register"]


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("lab", help="list labs, make student handouts",
                       description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    actions = p.add_subparsers(dest="action", required=True)
    actions.add_parser("list", help="list the labs").set_defaults(func=_list)
    h = actions.add_parser("handout", help="write a lab's student starter")
    h.add_argument("lab", nargs="+", help="lab name(s) or number(s); 'all' for every lab")
    h.add_argument("-o", "--output", metavar="DIR", required=True, help="new directory")
    h.set_defaults(func=_handout)
    c = actions.add_parser("check", help="check a lab's reference and handout")
    c.add_argument("lab", nargs="+", help="lab name(s) or number(s); 'all' for every lab")
    c.set_defaults(func=_check)


def _list(args: argparse.Namespace) -> int:
    from harness.grade.labs import all_labs

    for lab in all_labs():
        print(f"{lab.number:>2}  {lab.name:<10} {lab.title}  ({', '.join(lab.solution_files)})")
    return 0


def _handout(args: argparse.Namespace) -> int:
    from harness.grade.handout import make_handout
    from harness.grade.labs import all_labs, find_lab

    labs = all_labs() if args.lab == ["all"] else [find_lab(name) for name in args.lab]
    out = Path(args.output)
    changed = make_handout(labs, out)
    print(f"handout for {', '.join(lab.name for lab in labs)} in {out}: "
          f"solutions removed from {', '.join(changed) or 'nothing'}")
    return 0


def _check(args: argparse.Namespace) -> int:
    from harness.grade.labcheck import check_lab
    from harness.grade.labs import all_labs, find_lab

    labs = all_labs() if args.lab == ["all"] else [find_lab(name) for name in args.lab]
    bad = 0
    for lab in labs:
        check = check_lab(lab)
        print(f"{lab.name}: reference {check.reference.points_line()}, "
              f"handout {check.handout.points_line()}: {'ok' if check.ok else 'PROBLEMS'}")
        for problem in check.problems:
            print(f"  {problem}")
        bad += not check.ok
    return 1 if bad else 0
