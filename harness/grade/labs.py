"""Labs: one directory per lab under `labs/`, described by its `lab.toml`.

    labs/<name>/lab.toml     title, number, the kernel files holding its solution
    labs/<name>/test_*.py    the graded tests (pytest, with the privlab plugin)
    labs/<name>/hidden/      hidden tests (run only with `--hidden DIR`)
    labs/<name>/README.md    the students' page
    labs/base/               base-system tests every lab with `base = true` includes
    labs/conftest.py         enables the pytest plugin (harness/grade/plugin.py) for them

lab.toml:

    title = "System-call accounting: task_info"
    number = 1
    solution_files = ["kernel/taskinfo.c"]
    base = true
    requires = ["pipe"]     # optional: labs whose solutions this lab's tests need too
                            # (shown at the top of its README; `privlab lab check` grades
                            # the lab with them)
    icount_shift = 5        # optional: guest ns per instruction is 2^N (default: privlab's pace)
    smp = 1                 # optional: harts in every boot, 1 to 8 (--smp)
    seeds = 4               # optional: tests marked smp run under seeds 0..3 (--smp-seed);
                            # or a list, seeds = [0, 7, 42] (harness/grade/seeds.py)
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from pathlib import Path

from ..errors import BadInput
from ..pace import DEFAULT_ICOUNT_SHIFT, MAX_ICOUNT_SHIFT
from ..paths import REPO_ROOT
from .seeds import DEFAULT_SEEDS, parse_harts, parse_seeds

__all__ = ["BASE_DIR", "LABS_DIR", "Lab", "all_labs", "find_lab", "is_base_test", "load_lab",
           "prerequisites"]

LABS_DIR = REPO_ROOT / "labs"
BASE_DIR = LABS_DIR / "base"


@dataclass(frozen=True)
class Lab:
    """A lab as its lab.toml describes it: name, directory, solution files and how it is
    graded."""
    name: str
    title: str
    number: int
    directory: Path
    solution_files: tuple[str, ...]
    base: bool
    icount_shift: int = DEFAULT_ICOUNT_SHIFT
    smp: int = 1
    seeds: tuple[int, ...] = DEFAULT_SEEDS
    requires: tuple[str, ...] = ()

    @property
    def hidden_dir(self) -> Path:
        return self.directory / "hidden"

    @property
    def readme(self) -> Path:
        return self.directory / "README.md"

    def test_paths(self, *, hidden: Path | None = None) -> list[Path]:
        """What pytest collects for this lab: its tests, base tests, hidden tests."""
        paths = [self.directory]
        if self.base:
            paths.append(BASE_DIR)
        if hidden is not None:
            paths.append(hidden)
        return paths


def is_base_test(nodeid: str) -> bool:
    """Whether a graded test's pytest node id names a base-system test: a file of
    labs/base/, whatever directory pytest took as its root (a lab kept outside labs/
    makes it a common ancestor, and the ids longer)."""
    file = Path(nodeid.split("::", 1)[0])
    return file.parent.name == BASE_DIR.name and (BASE_DIR / file.name).is_file()


def load_lab(directory: Path) -> Lab:
    spec = directory / "lab.toml"
    try:
        data = tomllib.loads(spec.read_text())
    except (OSError, tomllib.TOMLDecodeError) as e:
        raise BadInput(f"{spec}: {e}") from e
    shift = data.get("icount_shift", DEFAULT_ICOUNT_SHIFT)
    if not isinstance(shift, int) or not 0 <= shift <= MAX_ICOUNT_SHIFT:
        raise BadInput(f"{spec}: icount_shift must be an integer from 0 to "
                       f"{MAX_ICOUNT_SHIFT}, not {shift!r}")
    smp = parse_harts(data.get("smp", 1), f"{spec}: smp")
    seeds = parse_seeds(data.get("seeds", DEFAULT_SEEDS), f"{spec}: seeds")
    requires = data.get("requires", [])
    if not isinstance(requires, list) or not all(isinstance(r, str) and r for r in requires) \
            or directory.name in requires:
        raise BadInput(f"{spec}: requires must be a list of other labs' names, "
                       f"not {requires!r}")
    return Lab(name=directory.name, title=str(data.get("title", directory.name)),
               number=int(data.get("number", 0)), directory=directory,
               solution_files=tuple(data.get("solution_files", ())),
               base=bool(data.get("base", True)), icount_shift=shift, smp=smp, seeds=seeds,
               requires=tuple(requires))


def all_labs(root: Path = LABS_DIR) -> list[Lab]:
    labs = [load_lab(d) for d in sorted(root.iterdir()) if (d / "lab.toml").is_file()]
    return sorted(labs, key=lambda lab: (lab.number, lab.name))


def find_lab(name: str, root: Path = LABS_DIR) -> Lab:
    """A lab by directory name or number; a path to a lab directory also works."""
    path = Path(name)
    if (path / "lab.toml").is_file():
        return load_lab(path.resolve())
    labs = all_labs(root)
    for lab in labs:
        if name in (lab.name, str(lab.number)):
            return lab
    known = ", ".join(f"{lab.number} {lab.name}" for lab in labs)
    raise BadInput(f"no lab {name!r} (labs: {known})")


def prerequisites(lab: Lab, labs: list[Lab] | None = None) -> list[Lab]:
    """The labs `lab` requires, directly or through another, each once, deepest first;
    BadInput for a name no lab has or a cycle."""
    by_name = {other.name: other for other in (all_labs(lab.directory.parent)
                                                if labs is None else labs)}
    order: list[Lab] = []

    def visit(name: str, path: tuple[str, ...]) -> None:
        if name in path:
            raise BadInput(f"labs/{lab.name}/lab.toml: requires goes round in a circle: "
                           f"{' -> '.join((*path, name))}")
        if name not in by_name:
            raise BadInput(f"labs/{path[-1]}/lab.toml: requires {name!r}, but there is no "
                           "such lab")
        for needed in by_name[name].requires:
            visit(needed, (*path, name))
        if name != lab.name and by_name[name] not in order:
            order.append(by_name[name])

    by_name.setdefault(lab.name, lab)
    visit(lab.name, ())
    return order
