"""`privlab step` on the command line: bad input is one line and a non-zero status,
before any screen is drawn."""

from __future__ import annotations

import pytest

from privlab.cli.main import main


@pytest.mark.parametrize(("argv", "message"), [
    (["step", "--at", "bogus"], "privlab: bad point 'bogus': expected trap:N"),
    (["step", "--break", "nosuchsymbol"], "privlab: no symbol 'nosuchsymbol' in the loaded images"),
    (["step", "--web", "--port", "70000"], "privlab: --port must be 1 to 65535, not 70000"),
    (["step", "--user", "nosuchprogram"], "privlab: "),
])
def test_bad_input_is_one_line(argv: list[str], message: str,
                               capsys: pytest.CaptureFixture[str]) -> None:
    status = main(argv)
    err = capsys.readouterr().err
    assert status != 0
    assert err.startswith(message), err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err


def test_every_must_be_positive(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as e:
        main(["step", "--every", "0"])
    assert e.value.code == 2
    assert "--every: must be positive: '0'" in capsys.readouterr().err
