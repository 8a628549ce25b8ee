/*
 * hpm.c: the programmable counters mhpmcounter3-18 and the events mhpmevent3-31 select.
 *
 * QEMU 7.2 on virt has 16 programmable counters and, without Sscofpmf (off by default:
 * scountovf and the RV32 mhpmeventNh are illegal there), implements two events that
 * mean something here: event 1, cycles, and event 2, instructions retired, the SBI PMU
 * encoding QEMU takes from mhpmevent bits 19:0 (the upper bits are Sscofpmf's filters,
 * which QEMU applies to neither event). A counter selecting one counts what mcycle or
 * minstret counts, at the same moments:
 *   cycles        guest time in ns (interrupt.c's guest_ns: QEMU's -icount clock)
 *   instructions  every instruction retired; a write to the counter takes effect after
 *                 the writing instruction retires, so that one is not counted
 *                 (as csrops.c does for minstret, the spec's rule)
 * A set bit N of mcountinhibit stops counter N where it is; clearing it lets it go on
 * from there. Any other event (QEMU's TLB-miss events included: docs/machine.md says
 * why) counts nothing, and the counter keeps what was written.
 *
 * Where QEMU 7.2 departs from the spec, the core follows the spec (docs/machine.md,
 * "Performance counters", lists each case): QEMU gives an event to only the first
 * counter that selects it, reads a counter whose event was selected without writing it
 * as the whole count since reset, counts the instruction that writes the counter,
 * forgets mcountinhibit once a counter has run, and on RV32 does not carry into the
 * high half.
 *
 * Storage: mhpmcounter[i] is the counter's value while it stands still and its offset
 * from the event's source while it counts, so a running counter costs nothing per
 * instruction. Every change of what a counter counts goes through hpm_retarget.
 */
#include "hart.h"

#define HPM_EVENT_MASK 0xfffffull   /* SBI event index: type 19:16, code 15:0 */
#define HPM_EVENT_CYCLES 1
#define HPM_EVENT_INSTRUCTIONS 2

/* Whether counter i counts with this event selected and this mcountinhibit. */
static bool counts_with(unsigned i, uint64_t event, uint64_t inhibit)
{
    if (inhibit >> (i + HPM_FIRST) & 1)
        return false;
    event &= HPM_EVENT_MASK;
    return event == HPM_EVENT_CYCLES || event == HPM_EVENT_INSTRUCTIONS;
}

/* What counter i counts, now: guest ns or instructions retired. */
static uint64_t source(const hart *h, unsigned i)
{
    return (h->mhpmevent[i] & HPM_EVENT_MASK) == HPM_EVENT_CYCLES ? guest_ns(h) : h->s.instret;
}

static bool running(const hart *h, unsigned i)
{
    return counts_with(i, h->mhpmevent[i], h->mcountinhibit);
}

uint64_t hpm_read(const hart *h, unsigned i)
{
    return running(h, i) ? source(h, i) + h->mhpmcounter[i] : h->mhpmcounter[i];
}

/* A CSR write of `value`: the writing instruction (not yet retired) is not counted. */
void hpm_write(hart *h, unsigned i, uint64_t value)
{
    if (!running(h, i)) {
        h->mhpmcounter[i] = value;
        return;
    }
    bool instret = (h->mhpmevent[i] & HPM_EVENT_MASK) == HPM_EVENT_INSTRUCTIONS;
    h->mhpmcounter[i] = value - source(h, i) - (instret ? 1 : 0);
}

/* mhpmevent or mcountinhibit is about to become `event`/`inhibit`: every counter keeps
 * its value across the change, and one that starts counts from the next instruction on
 * (the changing instruction itself is counted when a counter starts and not when it
 * stops, as with mcountinhibit for minstret). */
void hpm_retarget(hart *h, unsigned i, uint64_t event, uint64_t inhibit)
{
    uint64_t value = hpm_read(h, i);
    bool counts = counts_with(i, event, inhibit);
    h->mhpmevent[i] = event;
    h->mhpmcounter[i] = counts ? value - source(h, i) : value;
}
