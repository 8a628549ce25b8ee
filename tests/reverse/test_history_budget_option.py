"""--history-budget: `privlab step` and `privlab run --gdb` take the
history's budget on the command line as well as from PRIVLAB_HISTORY_BUDGET, and the
stepper's status line says how far back the history reaches, from the snapshots it
actually holds."""

from __future__ import annotations

import pytest
from devices.guests import build_guest

from privlab.api import Session
from privlab.api.timetravel import instructions
from privlab.cli.main import main
from privlab.gdb import GdbServer, Stub
from privlab.gdb.server import Address
from privlab.machine import Machine
from privlab.stepper.controller import Stepper

EVERY = 20_000
BUDGET = 160 << 20      # above RAM's 128 MiB: the newest snapshot names every page


@pytest.mark.parametrize(("argv", "message"), [
    (["run", "--history-budget", "1G", "--user", "hello"],
     "privlab: --history-budget needs --gdb [HOST:]PORT (it bounds reverse execution's "
     "history)"),
    (["run", "--gdb", "0", "--history-budget", "lots", "--user", "hello"],
     "privlab: history budget 'lots': not a size (try 512M or 2G)"),
    (["step", "--history-budget", "1M"],
     "privlab: history budget '1M' is below the least useful, 16 MiB"),
])
def test_a_bad_history_budget_is_one_line(argv: list[str], message: str,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    status = main(argv)
    err = capsys.readouterr().err
    assert status != 0
    assert err.strip() == message


def test_the_gdb_server_records_within_the_budget_it_is_given() -> None:
    m = Machine(64)
    server = GdbServer(m, Address("127.0.0.1", 0), history_budget=BUDGET)
    try:
        assert server.stub.history is not None
        assert server.stub.history.budget == BUDGET
    finally:
        server.close()
        m.close()
    m = Machine(64)
    stub = Stub(m, history_budget=64 << 20)
    assert stub.history is not None and stub.history.budget == 64 << 20
    m.close()


def test_the_steppers_status_says_how_far_back_the_history_reaches() -> None:
    s = Session.bare(build_guest("fresh_pages"))
    try:
        stepper = Stepper(s, every=EVERY, history_budget=BUDGET)
        h = stepper.history
        assert h.budget == BUDGET
        assert "history: last 0 insns" in stepper.status().plain
        s.run(max_insns=5 * EVERY)
        assert h.dropped == 0
        assert f"history: last {instructions(5 * EVERY)} insns" in stepper.status().plain
        # The guest rewrites every page: 40 snapshots of 5,000 fresh pages are far
        # past the budget, so the oldest go and the reach is what is left.
        s.run(max_insns=40 * EVERY)
        assert h.dropped > 0 and h.nbytes <= BUDGET
        reach = s.machine.total_instret() - h.start.instret
        assert 0 < reach < 45 * EVERY
        assert f"history: last {instructions(reach)} insns" in stepper.status().plain
    finally:
        s.close()
