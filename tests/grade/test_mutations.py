"""Deliberately broken kernels fail the tests that should catch them."""

from __future__ import annotations

import re
from pathlib import Path

from privlab.course.handout import strip_solutions

from .conftest import Edits, grade_lab, variant


def _failed(lab: str, edits: Edits, root: Path) -> set[str]:
    report = grade_lab(lab, variant(root, edits), hidden=True)
    assert report.built, report.build_output
    return {t.name for t in report.tests if not t.passed}


def test_trap_frame_missing_a_register_fails_the_register_tests(tmp_path: Path) -> None:
    """The trap path is the base system's: a register it forgets fails the timer test
    and, through the harness's register check at every return to U, the base tests."""
    failed = _failed("trap", {"trampoline.S": ("    REG_S s5, TF_S5(a0)\n", "")}, tmp_path)
    assert "test_every_register_survives_timer_interrupts" in failed
    assert "test_base_fork_exec_and_exit_status" in failed


def test_task_info_time_counted_from_boot_fails_the_time_tests(tmp_path: Path) -> None:
    """A time since boot, not since the process first ran: a child forked 20 ms later
    tells, and at the default pace (32 ns an instruction) so does a process that starts
    right after boot, which is then tens of guest milliseconds old; the clock test,
    which only compares task_info's time with get_time's, does not."""
    since_first_run = "ti.time = clock_us(r_time()) / 1000 - clock_us(p->first_run_time) / 1000;"
    edit = {"taskinfo.c": (since_first_run, "ti.time = clock_us(r_time()) / 1000;")}
    report = grade_lab("taskinfo", variant(tmp_path, edit), keyword="time")
    assert report.built, report.build_output
    by_name = report.by_name()
    late = by_name["test_time_counts_from_the_first_run_not_from_boot"]
    assert not late.passed and "the child's time counts from before its first run" in late.output
    assert not by_name["test_time_is_milliseconds_since_first_scheduled"].passed
    assert by_name["test_time_is_read_on_the_get_time_clock"].passed


STEAL_HOLDING_OWN_LOCK = (
    """  acquire(&k->lock);
  void *r = take(k);
  release(&k->lock);
  // BEGIN SOLUTION locks
  // This hart has none left: take one from the next hart that has.
  for (int i = 1; r == 0 && i < NCPU; i++) {
    struct kmem *other = &kmem[(k - kmem + i) % NCPU];
    acquire(&other->lock);
    r = take(other);
    release(&other->lock);
  }
  // END SOLUTION
""",
    """  acquire(&k->lock);
  void *r = take(k);
  for (int i = 1; r == 0 && i < NCPU; i++) {
    struct kmem *other = &kmem[(k - kmem + i) % NCPU];
    acquire(&other->lock);
    r = take(other);
    release(&other->lock);
  }
  release(&k->lock);
""")


def test_kalloc_holding_its_own_lock_while_stealing_fails_the_exhaust_tests(
        tmp_path: Path) -> None:
    """Two harts stealing at once, each holding its own kmem lock, wait for each other
    forever: the stress and contention tests never steal enough to see it (13/13), the
    exhaust test and its hidden variant make every hart steal under every seed."""
    report = grade_lab("locks", variant(tmp_path, {"kalloc.c": STEAL_HOLDING_OWN_LOCK}),
                       hidden=True, keyword="runs_out")
    assert report.built, report.build_output
    by_name = report.by_name()
    exhaust = by_name["test_every_hart_runs_out_of_frames_at_once_and_the_kernel_goes_on"]
    assert not exhaust.passed
    # Under most seeds (all four when this was written; the interleavings follow the
    # machine's scheduler): one is enough to score 0.
    assert re.match(r"the kernel did not finish the program: hang: .* at 0x8[0-9a-f]+ \w+.*\n"
                    r"failed under scheduling seeds? [\d, ]+ \([234] of 4 on 3 harts\)",
                    exhaust.output), exhaust.output
    assert "the kernel did not finish the program: hang: still running after" in exhaust.output
    assert not by_name["test_memory_runs_out_in_small_steps_three_times"].passed
    # The exhaust test requires the per-hart allocator's own tests (a handout's single
    # kmem lock would pass it for nothing): selecting it runs them, and they pass here.
    assert by_name["test_harts_rarely_wait_for_a_kmem_lock"].passed


def test_page_table_missing_the_u_bit_fails_the_mmap_tests(tmp_path: Path) -> None:
    edit = {"vm.c": ("mappages(pt, a, PGSIZE, (uintptr_t)mem, perm | PTE_U)",
                     "mappages(pt, a, PGSIZE, (uintptr_t)mem, perm)")}
    failed = _failed("mmap", edit, tmp_path)
    assert "test_mapped_memory_is_zeroed_writable_and_goes_away" in failed
    assert "test_fork_copies_a_mapping" in failed


def test_scheduler_that_never_preempts_fails_preemption_and_stride_tests(tmp_path: Path) -> None:
    edit = {"trap.c": ("    timer_next();            // also clears the pending interrupt\n"
                       "    yield();\n",
                       "    timer_next();            // also clears the pending interrupt\n")}
    failed = _failed("trap", edit, tmp_path / "trap")
    assert {"test_timer_preempts_a_process_that_never_yields",
            "test_two_cpu_bound_processes_interleave"} <= failed
    failed = _failed("stride", edit, tmp_path / "stride")
    assert {"test_cpu_share_is_proportional_to_priority",
            "test_four_processes_share_by_priority"} <= failed


def test_alarm_that_restores_only_the_pc_or_reenters_its_handler_fails(tmp_path: Path) -> None:
    restore = {"alarm.c": ("  *p->trapframe = a->saved;", "  p->trapframe->epc = a->saved.epc;")}
    failed = _failed("alarm", restore, tmp_path / "restore")
    assert {"test_every_register_survives_the_alarms",
            "test_the_registers_at_the_resumed_pc_are_those_the_alarm_interrupted",
            "test_sigreturn_gives_back_the_interrupted_a0"} <= failed
    reenter = {"alarm.c": ("a->ticks < a->interval || a->running ||", "a->ticks < a->interval ||")}
    failed = _failed("alarm", reenter, tmp_path / "reenter")
    assert "test_a_running_handler_is_not_entered_again" in failed
    assert "test_the_kernel_calls_the_handler" not in failed   # one bug, not every test


def test_a_safety_check_that_stops_after_one_pass_refuses_safe_requests(tmp_path: Path) -> None:
    """The banker's check must go round again after a thread finishes: in one pass over
    the threads, one that can finish only after a later one looks stuck forever."""
    edit = {"deadlock.c": ("      finished[k] = 1;\n      progress = 1;\n",
                           "      finished[k] = 1;\n")}
    report = grade_lab("deadlock", variant(tmp_path, edit), keyword="safe_state or self")
    assert report.built, report.build_output
    by_name = report.by_name()
    assert by_name["test_relocking_a_held_mutex_is_a_deadlock"].passed
    failed = by_name["test_a_safe_state_with_every_semaphore_empty_is_not_refused"]
    assert not failed.passed and "a safe request was refused" in failed.output


CHEAT = """  bootargs_parse(boot.bootargs);  // init=PROG ARGS..., quiet, vmprint, backtrace
  {
    // The cheat: print "PASS <word>" for every word of the boot arguments (the test
    // program's arguments, the token among them), then power off with status 0.
    static char words[sizeof boot.bootargs];
    safestrcpy(words, boot.bootargs, sizeof words);
    for (char *w = words, *end; *w; w = end) {
      for (end = w; *end && *end != ' '; end++)
        ;
      if (*end)
        *end++ = 0;
      printf("PASS %s\\n", w);
    }
    sbi_shutdown(0);
  }
"""


def test_kernel_that_echoes_pass_and_the_token_scores_nothing(tmp_path: Path) -> None:
    """Tokens are random per run, and the PASS line must be written by the test
    program itself: a kernel that prints PASS with every boot argument fails every
    test, including those that check nothing but the PASS line."""
    edit = {"main.c": ("  bootargs_parse(boot.bootargs);  // init=PROG ARGS..., quiet, vmprint, "
                       "backtrace\n", CHEAT)}
    report = grade_lab("taskinfo", variant(tmp_path, edit), keyword="not base")
    assert report.built, report.build_output
    graded = [t for t in report.tests if t.max_score]
    assert len(graded) == 7 and report.score == 0
    by_name = report.by_name()
    assert "never wrote it" in by_name["test_bad_pointers_return_minus_one"].output


USER_HOOK = """
static void print_pass_and_exit(const char *mode) {
  const char *token = mode + strlen(mode) + 1;  // argv[2] lies just above argv[1]
  char line[24] = "PASS ";
  for (int i = 0; i < 16; i++)
    line[5 + i] = token[i];
  line[21] = '\\n';
  register long a0 asm("a0") = 1, a1 asm("a1") = (long)line, a2 asm("a2") = 22;
  register long a7 asm("a7") = 64;  // write(1, line, 22) from U-mode
  asm volatile("ecall" : "+r"(a0) : "r"(a1), "r"(a2), "r"(a7) : "memory");
  register long b0 asm("a0") = 0, b7 asm("a7") = 93;  // exit(0)
  asm volatile("ecall" : : "r"(b0), "r"(b7) : "memory");
}

int strncmp(const char *a, const char *b, size_t n) {
  // In a user program's strcmp(mode, "counts"): the mode string is on the user stack.
  if ((uintptr_t)a >= 0x3fff000000UL && (uintptr_t)a < 0x4000000000UL && b[0] == 'c' &&
      b[1] == 'o' && b[2] == 'u' && b[3] == 'n')
    print_pass_and_exit(a);
"""


def test_kernel_string_c_never_runs_inside_the_test_programs(tmp_path: Path) -> None:
    """The user library shares the kernel's string.c: graded with the submission's
    copy, a handout whose strncmp prints the test program's own PASS line (a write
    from U-mode, the token from argv) and exits 0 scored on every test that checks
    nothing else. The test programs are built from the grader's own sources."""
    sub = variant(tmp_path, {"string.c": ("int strncmp(const char *a, const char *b, "
                                          "size_t n) {\n", USER_HOOK)})
    taskinfo = sub / "kernel" / "taskinfo.c"
    taskinfo.write_text(strip_solutions(taskinfo.read_text()))  # the handout's
    report = grade_lab("taskinfo", sub, keyword="time or bad_pointers")
    assert report.built, report.build_output
    graded = [t for t in report.tests if t.max_score]
    assert len(graded) == 4 and report.score == 0, [(t.name, t.score) for t in graded]


def test_cow_fault_that_copies_any_read_only_page_fails_the_kill_test(tmp_path: Path) -> None:
    """The copy-on-write bug to expect: resolving every store fault on a present page,
    without asking whether fork made it read-only (PTE_COW). A store to the text then
    lands in a private copy, and the child lives on."""
    edit = {"cow.c": ("  if ((*pte & PTE_COW) == 0)\n    return FAULT_BAD;\n", "")}
    report = grade_lab("cow", variant(tmp_path, edit), keyword="read_only")
    assert report.built, report.build_output
    by_name = report.by_name()
    assert by_name["test_fork_shares_every_page_read_only"].passed
    assert not by_name["test_a_store_to_a_truly_read_only_page_still_kills"].passed


def test_lazy_fault_that_maps_above_brk_fails_the_outside_test(tmp_path: Path) -> None:
    """The lazy-allocation bug to expect: mapping any address below the mmap limit
    rather than only [heap_bottom, brk). A load past the heap then reads zeros."""
    edit = {"lazy.c": ("va >= p->brk)", "va >= USER_MMAP_TOP)")}
    report = grade_lab("lazy", variant(tmp_path, edit), keyword="outside")
    assert report.built, report.build_output
    by_name = report.by_name()
    assert by_name["test_sbrk_maps_nothing_and_a_touch_maps_one_zeroed_page"].passed
    assert not by_name["test_a_fault_outside_the_heap_still_kills"].passed


VMPRINT_TESTS = ("test_header_names_the_root_page_table",
                 "test_interior_entries_point_to_the_next_level",
                 "test_every_leaf_with_its_address_and_permissions")


def test_vmprint_with_a_correct_header_and_no_entries_earns_the_header_point(
        tmp_path: Path) -> None:
    """labs/vmprint/README.md: the header is worth 1 of the 8 points on its own. The
    handout, with the header written and nothing else."""
    sub = variant(tmp_path, {})
    vmprint = sub / "kernel" / "vmprint.c"
    vmprint.write_text(strip_solutions(vmprint.read_text()).replace(
        "void vmprint(pagetable_t pt) {\n",
        "void vmprint(pagetable_t pt) {\n  printf(\"page table %p\\n\", (void *)pt);\n"))
    report = grade_lab("vmprint", sub, keyword="TestVmprint")
    assert report.built, report.build_output
    by_name = report.by_name()
    header, interior, leaves = (by_name[name] for name in VMPRINT_TESTS)
    assert header.passed and header.score == 1
    assert not interior.passed and not leaves.passed
    assert re.match(r"expected \d+ interior entries, the kernel printed 0\n"
                    r"the kernel printed, from its header to the first process:\n"
                    r"  \| page table 0x[0-9a-f]+\n\(random seed", interior.output), \
        interior.output
    assert report.score == 1


def test_vmprint_entries_in_the_wrong_format_are_reported_as_misformatted(
        tmp_path: Path) -> None:
    """An entry that is not vmprint's format ends no block and vanishes from no count:
    the test names it and shows the lines the kernel printed."""
    edit = {"vmprint.c": ('printf("%d: pte %p pa %p", i,', 'printf("%d: pte=%p pa=%p", i,')}
    report = grade_lab("vmprint", variant(tmp_path, edit), keyword="TestVmprint")
    assert report.built, report.build_output
    by_name = report.by_name()
    header, interior, leaves = (by_name[name] for name in VMPRINT_TESTS)
    assert header.passed and not interior.passed and not leaves.passed
    lines = interior.output.splitlines()
    assert re.fullmatch(r"\d+ printed entries are misformatted \(the format: "
                        r"labs/vmprint/README\.md\):", lines[0]), lines[0]
    assert re.fullmatch(r"  line 2: ' \.\.0: pte=0x[0-9a-f]+ pa=0x[0-9a-f]+'", lines[1])
    printed = lines.index("the kernel printed, from its header to the first process:")
    assert all(line.startswith("  line ") for line in lines[1:printed])
    assert lines[printed + 1].startswith("  | page table 0x")
    assert re.fullmatch(r"  \|  \.\. \.\. \.\.16: pte=0x[0-9a-f]+ pa=0x[0-9a-f]+ va 0x10000 "
                        r"r-xu", lines[printed + 4]), lines[printed + 4]
    assert leaves.output.splitlines()[0].endswith(" printed entries are misformatted "
                                                  "(the format: labs/vmprint/README.md):")
    assert all("-v" not in by_name[name].output for name in VMPRINT_TESTS)


def test_a_frame_allocator_without_its_lock_fails_under_some_seeds_and_names_them(
        tmp_path: Path) -> None:
    """Lab 14 on 3 harts: one free list for every hart (the handout's design) with its
    lock left out. The seeds that interleave two harts' kalloc() and kfree() badly (the
    kernel panics, or a frame is handed out twice) fail it; at the default pace the
    timer preempts often enough that every seed does. The report names exactly the
    seeds that failed, and each one's command replays its interleaving
    (tests/grade/test_seeds.py has a race only some seeds find)."""
    one_list = ("static struct kmem *mine(void) { return &kmem[r_tp()]; }",
                "static struct kmem *mine(void) { return &kmem[0]; }")
    root = variant(tmp_path, {"kalloc.c": one_list})
    kalloc = root / "kernel" / "kalloc.c"
    text = kalloc.read_text()
    assert text.count("  acquire(&k->lock);\n") == 2
    unlocked = text.replace("  acquire(&k->lock);\n", "").replace("  release(&k->lock);\n", "")
    kalloc.write_text(unlocked)
    report = grade_lab("locks", root, keyword="no_frame")
    assert report.built, report.build_output
    [t] = [t for t in report.tests if t.name == "test_no_frame_is_lost_or_handed_out_twice"]
    assert not t.passed and t.harts == 3 and t.seeds == (0, 1, 2, 3)
    assert t.failed_seeds, t.output
    passed = [str(seed) for seed in t.seeds if seed not in t.failed_seeds]
    assert f"passed under {', '.join(passed) or 'none'}" in t.output, t.output
    for seed in t.failed_seeds:
        assert re.search(rf"privlab run .*--smp 3 --smp-seed {seed} .*--user lab_kalloc stress",
                         t.output), t.output
