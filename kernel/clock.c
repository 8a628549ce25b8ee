// clock.c: the one clock user programs see. get_time reads it out and task_info
// measures with it: the `time` CSR (the platform timer, boot.timebase_hz ticks a
// second, counting since reset) in whole microseconds, rounded down.
//
// A millisecond reading is that count over 1000, exactly what user space computes
// from get_time (sec * 1000 + usec / 1000, time_ms() in userland/lib/ulib.c). So
// task_info's time, the difference of two such readings (taskinfo.c), counts the
// same millisecond boundaries as get_time does: a process running before it read
// t1 and t2 gets a time of at least t2 - t1. The milliseconds *in* the difference
// of two tick counts would not do: a process that ran from 0.9 ms to 1.1 ms has
// seen get_time go from 0 to 1 ms but has run for 0 whole milliseconds.
#include "defs.h"
#include "proc.h"
#include "riscv.h"

// Microseconds since reset at `ticks` of the timer. Split at whole seconds so that
// ticks * 1000000 only overflows after weeks rather than in half an hour.
uint64_t clock_us(uint64_t ticks) {
  uint64_t hz = boot.timebase_hz;
  return ticks / hz * 1000000 + ticks % hz * 1000000 / hz;
}

// Threads in sys_sleep() sleep here; every timer interrupt wakes them to look at the
// clock (timer_next() in trap.c calls clock_tick()).
static char sleepers;

void clock_tick(void) { wakeup(&sleepers); }

// sleep(ms) (101, in rCore's form: milliseconds, where Linux's nanosleep takes a
// timespec): block the calling thread until at least ms milliseconds have passed on
// the clock, while others run; with nothing else to run the hart waits in wfi, so the
// clock skips ahead to the wake-up rather than spinning towards it. 0, or -1 for a
// negative ms or a wait cut short by a signal. Without a timer interrupt (lab 6's
// handout) nothing would wake a sleeper: it yields until its time has come instead.
long sys_sleep(long ms) {
  if (ms < 0)
    return -1;
  uint64_t hz = boot.timebase_hz;
  uint64_t until = r_time() + (uint64_t)ms / 1000 * hz + ((uint64_t)ms % 1000 * hz + 999) / 1000;
  while (r_time() < until) {
    if (!timer_enabled()) {
      yield();
      continue;
    }
    timer_wake_by(until);
    if (sleep_intr(&sleepers) < 0)
      return -1;
  }
  return 0;
}
