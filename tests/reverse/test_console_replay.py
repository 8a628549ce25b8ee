"""Going back in time replays from a snapshot, and the replay prints what the guest
printed then: the console echoes each byte once, however often the run goes back over
it (a debugger's reverse-stepi showed `Hello, world!` twice)."""

from __future__ import annotations

import pytest

from privlab.api import Session
from privlab.build.images import Images
from privlab.devices import Console


def test_a_rewound_console_echoes_only_past_what_it_showed(
        capfdbinary: pytest.CaptureFixture[bytes]) -> None:
    c = Console(echo=True)
    for b in b"Hello\n":
        c.put(b)
    c.rewind(b"He", False)
    for b in b"llo\nmore\n":
        c.put(b)
    c.flush()
    assert capfdbinary.readouterr().out == b"Hello\nmore\n"
    assert (bytes(c.data), c.written, c.shown) == (b"Hello\nmore\n", 11, 11)


def test_going_back_over_hellos_write_does_not_print_it_again(
        images: Images, capfdbinary: pytest.CaptureFixture[bytes]) -> None:
    s = Session.boot("hello", images=images, echo=True, bundled_disk=False)
    s.record(every=20_000)
    s.run()
    assert s.console.endswith("Hello, world!\n")
    s.run_back(syscall=True)                 # back before the write's return ...
    s.run_back(syscall=True)                 # ... and before the write itself
    assert "Hello" not in s.console
    s.run()                                  # and forward over it again
    s.machine.console.flush()
    assert s.console.endswith("Hello, world!\n")
    assert capfdbinary.readouterr().out.count(b"Hello, world!") == 1
    s.close()
