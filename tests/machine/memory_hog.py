"""Run tests/devices/guests.py fresh_pages with an unbounded history under the
grader's memory limit for test processes, as a grading would; print the one line a
MemoryError becomes (used by test_memory_limits.py)."""

from __future__ import annotations

import sys

from devices.guests import build_guest

from privlab.api.timetravel import History
from privlab.course.confinement import limits_for_tests
from privlab.grade.memlimit import memory_line
from privlab.machine import Machine, load_elf
from privlab.machine.assemble import boot_bare

image = load_elf(build_guest("fresh_pages"))
limits_for_tests().apply()
m = Machine(image.xlen)
boot_bare(m, image)
h = History(m, 20_000, budget=1 << 40)
try:
    while True:
        m.run(max_insns=20_000)
except MemoryError:
    print(memory_line())
    sys.exit(1)
