"""harness/entry.py defers urllib.parse, which pathlib imports for `Path.as_uri` alone:
a wheel's run never loads it (nor ipaddress, which it brings), and whatever uses it
later gets the real module by every way of importing it.

The checks run in an interpreter started without `site`, so that nothing a `.pth`
file loads (another project's editable install, say) has loaded pathlib first, which
makes the deferral (rightly) do nothing."""

from __future__ import annotations

import json
import subprocess
import sys

from privlab.paths import REPO_ROOT

ENTRY = REPO_ROOT / "harness" / "entry.py"


def _probe(body: str) -> dict[str, object]:
    """Load harness/entry.py by its path in `python -S`, run `body`, return its `out`."""
    code = (
        "import importlib.util, json, sys\n"
        f"spec = importlib.util.spec_from_file_location('entry', {str(ENTRY)!r})\n"
        "entry = importlib.util.module_from_spec(spec)\n"
        "spec.loader.exec_module(entry)\n"
        "out = {}\n"
        f"{body}\n"
        "print(json.dumps(out))\n")
    proc = subprocess.run([sys.executable, "-S", "-c", code], capture_output=True, text=True,
                          check=True)
    return json.loads(proc.stdout.splitlines()[-1])


def test_pathlib_imports_without_url_parsing_until_a_uri_is_written() -> None:
    seen = _probe(
        "entry._defer_url_parsing()\n"
        "import pathlib\n"
        "out['before'] = sorted(m for m in ('ipaddress', 'urllib.parse') if\n"
        "    type(sys.modules.get(m)).__name__ == 'module')\n"
        "out['stand_in'] = type(sys.modules['urllib.parse']).__name__\n"
        "out['uri'] = pathlib.PurePosixPath('/a b/%c').as_uri()\n"
        "out['after'] = type(sys.modules['urllib.parse']).__name__\n"
        "out['ipaddress'] = 'ipaddress' in sys.modules\n"
        "out['again'] = pathlib.PurePosixPath('/x y').as_uri()\n")
    assert seen == {"before": [], "stand_in": "_Deferred", "uri": "file:///a%20b/%25c",
                    "after": "module", "ipaddress": True, "again": "file:///x%20y"}


def test_every_way_of_importing_it_gets_the_real_module() -> None:
    seen = _probe(
        "entry._defer_url_parsing()\n"
        "import pathlib\n"
        "import urllib.parse\n"
        "out['attribute'] = urllib.parse.urlsplit('http://host/p?q').path\n"
        "from urllib.parse import quote, quote_from_bytes\n"
        "out['from'] = [quote('a b'), quote_from_bytes(b'c d')]\n"
        "import importlib\n"
        "real = importlib.import_module('urllib.parse')\n"
        "out['same'] = [sys.modules['urllib.parse'] is real, urllib.parse is real,\n"
        "    type(real).__name__]\n"
        "out['forwarder'] = pathlib.urlquote_from_bytes(b'e f')\n")
    assert seen == {"attribute": "/p", "from": ["a%20b", "c%20d"],
                    "same": [True, True, "module"], "forwarder": "e%20f"}


def test_a_from_import_of_another_name_loads_it_at_once() -> None:
    """`from urllib.parse import urlsplit` (not a name the stand-in forwards) is the
    real function, not a stand-in's: the import loads the module."""
    seen = _probe(
        "entry._defer_url_parsing()\n"
        "from urllib.parse import urlsplit\n"
        "out['module'] = urlsplit.__module__\n"
        "out['loaded'] = type(sys.modules['urllib.parse']).__name__\n")
    assert seen == {"module": "urllib.parse", "loaded": "module"}


def test_nothing_is_deferred_once_pathlib_is_loaded() -> None:
    """An editable install's finder (or an embedding program) loaded pathlib first:
    urllib.parse is already the real module and stays so."""
    seen = _probe(
        "import pathlib\n"
        "entry._defer_url_parsing()\n"
        "out['type'] = type(sys.modules['urllib.parse']).__name__\n")
    assert seen == {"type": "module"}


def test_argparse_answers_untranslated_without_loading_gettext() -> None:
    seen = _probe(
        "entry._untranslated_argparse()\n"
        "out['loaded'] = sorted(m for m in ('gettext', 'locale') if m in sys.modules)\n"
        "import argparse\n"
        "out['words'] = [argparse._('usage: '), argparse.ngettext('expected %s argument',\n"
        "    'expected %s arguments', 1), argparse.ngettext('expected %s argument',\n"
        "    'expected %s arguments', 2)]\n"
        "p = argparse.ArgumentParser(prog='p', exit_on_error=False)\n"
        "p.add_argument('--n', nargs=2)\n"
        "try:\n    p.parse_args(['--n', '1'])\nexcept argparse.ArgumentError as e:\n"
        "    out['error'] = str(e)\n"
        "out['still'] = 'gettext' in sys.modules\n")
    assert seen == {"loaded": [], "words": ["usage: ", "expected %s argument",
                                            "expected %s arguments"],
                    "error": "argument --n: expected 2 arguments", "still": False}


def test_whatever_imports_gettext_next_gets_the_real_module() -> None:
    seen = _probe(
        "entry._untranslated_argparse()\n"
        "import argparse, gettext\n"
        "out['real'] = [hasattr(gettext, 'translation'), gettext.gettext is argparse._]\n"
        "out['same'] = gettext.gettext('usage: ') == argparse._('usage: ')\n")
    assert seen == {"real": [True, False], "same": True}
