"""The editable install's import finder (packaging/privlab_backend.py): setuptools'
editable wheel with its finder replaced by one that loads nothing at start-up."""

from __future__ import annotations

import base64
import hashlib
import importlib.util
import subprocess
import sys
import zipfile
from pathlib import Path
from types import ModuleType

import pytest

import privlab
from privlab.paths import REPO_ROOT

BACKEND = REPO_ROOT / "packaging" / "privlab_backend.py"
pytestmark = pytest.mark.skipif(not BACKEND.is_file(), reason="not a checkout (a wheel's tests)")


def _backend() -> ModuleType:
    spec = importlib.util.spec_from_file_location("privlab_backend", BACKEND)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


SETUPTOOLS_PTH = b"import __editable___privlab_0_1_0_finder; " \
                 b"__editable___privlab_0_1_0_finder.install()"
DIST = "privlab-0.1.0.dist-info"


def _setuptools_wheel(path: Path) -> Path:
    """An editable wheel laid out as setuptools' finder strategy makes it."""
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("__editable___privlab_0_1_0_finder.py", "MAPPING = {}\n")
        z.writestr("__editable__.privlab-0.1.0.pth", SETUPTOOLS_PTH)
        z.writestr(f"{DIST}/METADATA", "Metadata-Version: 2.1\nName: privlab\n")
        z.writestr(f"{DIST}/entry_points.txt", "[console_scripts]\nprivlab = privlab.entry:main\n")
        z.writestr(f"{DIST}/RECORD", "stale,,\n")
    return path


def _digest(data: bytes) -> str:
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


def test_the_wheel_gets_the_light_finder_and_a_record_that_holds(tmp_path: Path) -> None:
    backend = _backend()
    wheel = _setuptools_wheel(tmp_path / "privlab-0.1.0-0.editable-py3-none-any.whl")
    assert backend.lighten(wheel, tmp_path / "harness") is True
    with zipfile.ZipFile(wheel) as z:
        names = z.namelist()
        files = {n: z.read(n) for n in names}
    assert "__editable___privlab_0_1_0_finder.py" not in files
    assert files["__editable__.privlab-0.1.0.pth"] == b"import __editable___privlab_finder\n"
    assert repr(str(tmp_path / "harness")).encode() in files["__editable___privlab_finder.py"]
    assert files[f"{DIST}/entry_points.txt"].startswith(b"[console_scripts]")
    assert names[-1] == f"{DIST}/RECORD"
    rows = files[f"{DIST}/RECORD"].decode().splitlines()
    assert rows[-1] == f"{DIST}/RECORD,,"
    listed = {}
    for row in rows[:-1]:
        name, digest, size = row.split(",")
        listed[name] = (digest, int(size))
    assert listed == {n: (_digest(d), len(d)) for n, d in files.items() if n != f"{DIST}/RECORD"}


@pytest.mark.parametrize("change", ["no finder", "another pth", "two pths"])
def test_a_wheel_laid_out_otherwise_is_left_as_it_was(tmp_path: Path, change: str) -> None:
    """Another setuptools, another strategy: the install must work as setuptools made it."""
    wheel = tmp_path / "privlab-0.1.0-0.editable-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as z:
        if change != "no finder":
            z.writestr("__editable___privlab_0_1_0_finder.py", "MAPPING = {}\n")
        z.writestr("__editable__.privlab-0.1.0.pth",
                   b"/some/src\n" if change == "another pth" else SETUPTOOLS_PTH)
        if change == "two pths":
            z.writestr("__editable__.other.pth", SETUPTOOLS_PTH)
        z.writestr(f"{DIST}/RECORD", "")
    before = wheel.read_bytes()
    assert _backend().lighten(wheel) is False
    assert wheel.read_bytes() == before


def _python_with_finder(package: Path, body: str) -> subprocess.CompletedProcess[str]:
    """`body` in an interpreter without site (nothing on the path finds privlab) whose
    only way to it is the finder written for `package`."""
    code = _backend().finder_source(package) + "\n" + body
    return subprocess.run([sys.executable, "-S", "-c", code], capture_output=True, text=True,
                          cwd="/")


def test_the_finder_maps_privlab_to_the_package_folder_and_loads_nothing() -> None:
    package = Path(privlab.__file__).parent
    done = _python_with_finder(package, (
        "print('pathlib' in sys.modules, 'importlib.util' in sys.modules)\n"
        "import privlab.abi.csr\n"
        "print(privlab.__file__)\n"
        "print(privlab.abi.csr.__file__)\n"
        "print(privlab.__spec__.cached is not None)\n"))
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        "False False", str(package / "__init__.py"), str(package / "abi" / "csr.py"), "True"]


def test_a_checkout_that_is_gone_is_not_found() -> None:
    done = _python_with_finder(Path("/nonexistent/harness"), "import privlab\n")
    assert done.returncode == 1
    assert "ModuleNotFoundError: No module named 'privlab'" in done.stderr


def test_this_checkout_is_installed_with_the_light_finder() -> None:
    """The README's `pip install -e .` goes through the backend: an interpreter of this
    venv starts without the modules setuptools' finder loaded."""
    if Path(privlab.__file__).parent != REPO_ROOT / "harness":
        pytest.skip("privlab is not installed from this checkout")
    # no directory on the path holds a `privlab` (the folder is harness/): a finder
    # found it, and it must be the backend's
    assert [getattr(f, "__name__", None) for f in sys.meta_path].count("PrivlabFinder") == 1
    done = subprocess.run([sys.executable, "-c", "import sys; print(sorted(m for m in "
                           "('pathlib', 'importlib.util', 'urllib.parse') if m in sys.modules))"],
                          capture_output=True, text=True, check=True, cwd="/")
    assert done.stdout.strip() == "[]"
