"""setuptools hooks pyproject.toml cannot state: the package list (every folder of
harness/ under the import name privlab), the wheel's prebuilt data
(packaging/stage.py, for every build but an editable one), its platform tag, and
whether zig is a dependency.

zig (the `ziglang` wheel, ~170 MB installed) compiles kernels. A clone's install
(`pip install -e .`) builds its kernel at first run, so it needs zig; a wheel made
from the sdist (`python -m build`) carries the built images and native core, so zig
is the `build` extra, wanted only to build kernels other than the bundled one
(`privlab build` of an edited tree, a lab handout, grading).
"""

from __future__ import annotations

import os
import platform
import subprocess
import sys
from pathlib import Path

from setuptools import Distribution, setup
from setuptools.command.build_py import build_py

try:
    from setuptools.command.bdist_wheel import bdist_wheel
except ImportError:  # setuptools < 70.1
    from wheel.bdist_wheel import bdist_wheel  # type: ignore[no-redef]

HERE = Path(__file__).resolve().parent
ZIG = "ziglang==0.17.1"
DEPENDENCIES = [
    "unicorn==2.1.4",
    "capstone>=5.0,<6",
    "pyelftools>=0.31",
    "rich>=13",
    "fdt>=0.3.3",
    "pytest>=8",
    "textual==8.2.8",
    "textual-serve==1.1.3",
    "pytest-xdist>=3.8,<4",
    "distributed>=2026.8.0,<2027",
]
# An sdist has PKG-INFO at its root; a clone does not.
FROM_SDIST = (HERE / "PKG-INFO").is_file()
# Machine names as manylinux tags spell them (platform.machine() differs on some hosts).
MACHINES = {"amd64": "x86_64", "x86_64": "x86_64", "arm64": "aarch64", "aarch64": "aarch64"}


def packages() -> list[str]:
    found = ["privlab"]
    for init in sorted((HERE / "harness").rglob("__init__.py")):
        rel = init.parent.relative_to(HERE / "harness")
        if rel.parts and "_data" not in rel.parts and "__pycache__" not in rel.parts:
            found.append(".".join(("privlab", *rel.parts)))
    return found


def wheel_platform() -> str:
    """manylinux2014 (glibc 2.17, what stage.py links the core against) for the
    machine of PRIVLAB_WHEEL_TARGET (zig's target triple) or this one; macOS 11 for
    an aarch64-macos target."""
    target = os.environ.get("PRIVLAB_WHEEL_TARGET", "")
    if "macos" in target:
        return "macosx_11_0_arm64"
    machine = target.split("-")[0] if target else platform.machine().lower()
    machine = MACHINES.get(machine, machine)
    return f"manylinux_2_17_{machine}.manylinux2014_{machine}"


class BuildPy(build_py):
    """build_py, then the prebuilt data into the built package (not for -e)."""

    def run(self) -> None:
        super().run()
        if getattr(self, "editable_mode", False):
            return
        package = Path(self.build_lib) / "privlab"
        subprocess.run([sys.executable, str(HERE / "packaging" / "stage.py"), str(HERE),
                        str(package)], check=True)


class BinaryDistribution(Distribution):
    """The wheel holds native libraries for one platform (installed with the rest of
    the package, in platlib), though no Python extension."""

    def has_ext_modules(self) -> bool:
        return True


class BdistWheel(bdist_wheel):
    """Tagged for any Python 3 (the libraries are loaded with ctypes) on one platform."""

    def get_tag(self) -> tuple[str, str, str]:
        return "py3", "none", wheel_platform()


setup(
    packages=packages(),
    install_requires=DEPENDENCIES if FROM_SDIST else [*DEPENDENCIES, ZIG],
    extras_require={"build": [ZIG], "test": ["pytest>=9", "ruff>=0.6", "mypy>=1.10", ZIG]},
    cmdclass={"build_py": BuildPy, "bdist_wheel": BdistWheel},
    distclass=BinaryDistribution,
)
