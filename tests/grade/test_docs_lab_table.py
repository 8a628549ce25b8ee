"""docs/grading/README.md's table of labs lists every lab `privlab lab list` does,
with its number, name, requirements and page."""

from __future__ import annotations

import re

from privlab.grade.labs import all_labs
from privlab.paths import REPO_ROOT


def test_the_lab_table_lists_every_lab_with_its_number_requires_and_page() -> None:
    text = (REPO_ROOT / "docs" / "grading" / "README.md").read_text()
    rows = re.findall(r"^\| (\d+) \| `(\w+)` \| [^|]+ \|([^|]*)\| \[labs/(\w+)\]"
                      r"\(\.\./\.\./labs/(\w+)/README\.md\) \|$", text, re.M)
    assert [(int(n), name) for n, name, *_ in rows] == \
        [(lab.number, lab.name) for lab in all_labs()]
    for (_, name, requires, shown, linked), lab in zip(rows, all_labs(), strict=True):
        assert shown == linked == name
        assert sorted(re.findall(r"`(\w+)`", requires)) == sorted(lab.requires), name
        assert (REPO_ROOT / "labs" / name / "README.md").is_file()
