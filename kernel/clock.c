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

// Microseconds since reset at `ticks` of the timer. Split at whole seconds so that
// ticks * 1000000 only overflows after weeks rather than in half an hour.
uint64_t clock_us(uint64_t ticks) {
  uint64_t hz = boot.timebase_hz;
  return ticks / hz * 1000000 + ticks % hz * 1000000 / hz;
}
