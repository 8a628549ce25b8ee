"""The renderings in docs/inspect/*.md are the tools' real output, re-run here.

Each rendering in those pages is a ```text block right after a marker naming what
produced it:

    <!-- rendered by: privlab trace --user hello -->
    <!-- rendered by: python (the code above) -->

`privlab ARGS` runs the CLI's `main(ARGS)` in this process with stdout captured, which
is what `COLUMNS=100 privlab ARGS > out.txt` writes: plain text, 100 columns (stderr is
not part of a rendering). `python (the code above)` runs the ```python block nearest
above the marker and captures what it prints. Each test compares one rendering with
its block line by line; trailing spaces are ignored, since editors strip them from
Markdown. The tour times itself, so the one wall-clock number in its last line is the
only text ignored.

After changing the tools, the kernel or a page, regenerate every block and review the
diff:

    PRIVLAB_REGEN_DOCS=1 pytest tests/inspect/test_docs_renderings.py
"""

from __future__ import annotations

import os
import re
import shlex
from collections.abc import Callable
from contextlib import redirect_stderr, redirect_stdout
from dataclasses import dataclass
from io import StringIO
from pathlib import Path

import pytest

from privlab.cli.main import main
from privlab.paths import REPO_ROOT

DOCS = REPO_ROOT / "docs" / "inspect"
REGEN = os.environ.get("PRIVLAB_REGEN_DOCS", "") not in ("", "0")

MARKER = re.compile(r"^<!-- rendered by: (?P<cmd>.+?) -->\n```text\n(?P<body>.*?)^```$",
                    re.MULTILINE | re.DOTALL)
PYTHON_BLOCK = re.compile(r"^```python\n(?P<code>.*?)^```$", re.MULTILINE | re.DOTALL)
FROM_CODE_ABOVE = "python (the code above)"

# Text that is not the machine's and differs from run to run: (command prefix, pattern).
WALL_CLOCK: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("privlab tour", re.compile(r"(?<=instructions, )\d+\.\d(?= s;)")),
)


@dataclass(frozen=True)
class Rendering:
    page: Path
    index: int        # the index-th marked block of the page
    line: int         # where its marker is, for messages
    command: str
    body: str
    code: str | None  # the python block above, for FROM_CODE_ABOVE

    @property
    def id(self) -> str:
        return f"{self.page.name}:{self.line}"


def _renderings(page: Path) -> list[Rendering]:
    text = page.read_text()
    out = []
    for i, m in enumerate(MARKER.finditer(text)):
        code = None
        if m["cmd"] == FROM_CODE_ABOVE:
            above = list(PYTHON_BLOCK.finditer(text, 0, m.start()))
            code = above[-1]["code"] if above else None
        out.append(Rendering(page, i, text.count("\n", 0, m.start()) + 1, m["cmd"], m["body"],
                             code))
    return out


PAGES = sorted(DOCS.glob("*.md"))
RENDERINGS = [r for page in PAGES for r in _renderings(page)]


def _normal(text: str) -> str:
    """Lines without trailing spaces, no trailing blank lines."""
    lines = [line.rstrip() for line in text.splitlines()]
    while lines and not lines[-1]:
        lines.pop()
    return "\n".join(lines) + "\n"


def _comparable(text: str, command: str) -> str:
    for prefix, pattern in WALL_CLOCK:
        if command.startswith(prefix):
            text = pattern.sub("N.N", text)
    return text


def _runner(r: Rendering) -> Callable[[], object]:
    """What produces the rendering: the CLI's main, or the python block above."""
    if r.command == FROM_CODE_ABOVE:
        assert r.code is not None, f"{r.id}: no ```python block above the marker"
        code = compile(r.code, f"{r.page.name} (the block above line {r.line})", "exec")
        return lambda: exec(code, {"__name__": "__main__"})
    argv = shlex.split(r.command)
    assert argv[0] == "privlab", f"{r.id}: a marker names `privlab ...` or python"
    return lambda: main(argv[1:])


def _run(r: Rendering, workdir: Path) -> str:
    """Its stdout, run in `workdir` (where files an example writes land)."""
    run, out = _runner(r), StringIO()
    cwd = Path.cwd()
    os.chdir(workdir)
    try:
        with redirect_stdout(out), redirect_stderr(StringIO()):
            run()
    finally:
        os.chdir(cwd)
    return _normal(out.getvalue())


def _rewrite(r: Rendering, fresh: str) -> None:
    text = r.page.read_text()
    m = list(MARKER.finditer(text))[r.index]
    r.page.write_text(text[:m.start("body")] + fresh + text[m.end("body"):])


@pytest.fixture
def plain_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    """The environment the renderings were made in: 100 columns, no forced colour."""
    monkeypatch.setenv("COLUMNS", "100")
    for name in ("FORCE_COLOR", "TTY_COMPATIBLE", "TTY_INTERACTIVE", "JUPYTER_COLUMNS"):
        monkeypatch.delenv(name, raising=False)


def test_every_page_has_a_rendering_and_every_marker_a_command() -> None:
    assert PAGES, f"no pages in {DOCS}"
    for page in PAGES:
        found = _renderings(page)
        assert found or page.name == "README.md", f"{page.name} has no marked rendering"
        for r in found:
            assert r.command.startswith("privlab ") or r.command == FROM_CODE_ABOVE, r.id
            assert r.command != FROM_CODE_ABOVE or r.code is not None, r.id
        markers = page.read_text().count("<!-- rendered by:")
        assert markers == len(found), f"{page.name}: a marker not followed by a ```text block"


def _anchors(page: Path) -> set[str]:
    """GitHub's ids for the page's headings: lower case, punctuation dropped, - for spaces."""
    heads = re.findall(r"^#+ (.+)$", page.read_text(), re.MULTILINE)
    return {re.sub(r"[^\w\- ]", "", h.lower()).replace(" ", "-") for h in heads}


def test_links_between_the_pages_lead_somewhere() -> None:
    for page in PAGES:
        for target in re.findall(r"\]\(([^)\s]+)\)", page.read_text()):
            if "://" in target:
                continue
            path, _, anchor = target.partition("#")
            dest = (page.parent / path).resolve() if path else page
            assert dest.exists(), f"{page.name}: link to missing {target}"
            if anchor:
                assert anchor in _anchors(dest), f"{page.name}: no heading for {target}"


@pytest.mark.usefixtures("plain_terminal")
@pytest.mark.parametrize("r", RENDERINGS, ids=[r.id for r in RENDERINGS])
def test_rendering_in_the_docs_is_what_the_tool_prints(r: Rendering, tmp_path: Path) -> None:
    fresh = _run(r, tmp_path)
    if REGEN:
        _rewrite(r, fresh)
        return
    assert _comparable(fresh, r.command) == _comparable(_normal(r.body), r.command), (
        f"{r.id}: `{r.command}` prints something else now; if that is intended, "
        "regenerate with PRIVLAB_REGEN_DOCS=1 and review the diff")
