/*
 * turns.c: the turns of several harts, run back to back inside the core.
 *
 * A machine of several harts runs them one at a time, each for a quantum drawn from
 * a seeded schedule (harness/machine/schedule.py says why and how). Returning to
 * Python between two turns costs more than a turn of ten thousand instructions, so
 * while nothing needs Python the core ends one hart's turn and begins the next itself,
 * doing exactly what the Python run loop would do at that switch, in the same order:
 * the finished hart's run is closed (budget, poll, events moved aside in order), its
 * LR reservation goes, the other harts hear of code it rewrote (codesync.c), the
 * schedule draws the next hart (waiting harts that nothing wakes yield their draw),
 * guest time carries over and the next hart's run is set up.
 *
 * It hands back to Python, right after an engine returned, whenever that return was
 * anything but a clean end of a turn (a device, a trap Python must see, an error), and
 * at a clean end when Python has something to do first: the run's budget or a point
 * it must look at (live input, a checkpoint), a stop asked for, a waiting hart to wake
 * or the event store full. Python then carries on from that return as if its own call
 * of the engine had made it, so an interleaving never depends on who ran the switch.
 */
#include <string.h>

#include "hart.h"

struct codesync;
void codesync_turn_ended(struct codesync *c, uint32_t k);
int codesync_turn_begins(struct codesync *c, uint32_t k);

#define M64 UINT64_MAX

/* SplitMix64 (Steele, Lea and Flood, 2014): fixed here, so an interleaving is a pure
 * function of the seed on any host. */
static uint64_t next64(uint64_t *state)
{
    uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

struct draw {
    uint64_t rng;
    uint32_t round[MAX_HARTS], round_len;
};

/* The next (hart, quantum) of the schedule, as Schedule.next_turn draws it: a new
 * round is a Fisher-Yates shuffle of the harts, taken from its front. */
static void draw_next(struct draw *d, const struct turn_state *t, uint32_t *k,
                      uint64_t *quantum)
{
    if (!d->round_len) {
        uint32_t order[MAX_HARTS];
        for (uint32_t i = 0; i < t->harts; i++)
            order[i] = i;
        for (uint32_t i = t->harts - 1; i > 0; i--) {
            uint32_t j = (uint32_t)(next64(&d->rng) % (i + 1));
            uint32_t x = order[i];
            order[i] = order[j];
            order[j] = x;
        }
        for (uint32_t i = 0; i < t->harts; i++)      /* reversed: popped from the end */
            d->round[i] = order[t->harts - 1 - i];
        d->round_len = t->harts;
    }
    *k = d->round[--d->round_len];
    *quantum = t->quantum_min + next64(&d->rng) % (t->quantum_max - t->quantum_min + 1);
}

/* A copy of t's schedule to draw on, and its draws made t's. */
static struct draw draw_from(const struct turn_state *t)
{
    struct draw d = {.rng = t->rng, .round_len = t->round_len};
    memcpy(d.round, t->round, sizeof d.round);
    return d;
}

static void draw_commit(struct turn_state *t, const struct draw *d)
{
    t->rng = d->rng;
    t->round_len = d->round_len;
    memcpy(t->round, d->round, sizeof t->round);
}

/* The schedule's one implementation, for Python too (Schedule.next_turn): draw the
 * next (hart, quantum) from the rng and round in *t. */
void turns_draw(struct turn_state *t, uint32_t *k, uint64_t *quantum)
{
    struct draw d = draw_from(t);
    draw_next(&d, t, k, quantum);
    draw_commit(t, &d);
}

static uint64_t total_instret(const struct turn_state *t, hart **harts)
{
    uint64_t total = 0;
    for (uint32_t j = 0; j < t->harts; j++)
        total += harts[j]->s.instret;
    return total;
}

/* HartTurns.set_clock: guest time on h reads the machine's clock. */
static void set_clock(hart *h, uint64_t clock_ns)
{
    h->s.idle_ns = clock_ns - (h->s.instret << h->s.icount_shift);
}

/* The turn of hart h, ending at instret `end`, is over (HartTurns.run's test). */
static bool turn_over(const hart *h, uint64_t end)
{
    return h->s.instret >= end && h->s.instret >= h->irq_from;
}

/* The hart whose turn comes next, drawn on a copy of the schedule: waiting harts that
 * nothing wakes give their draw up, as HartTurns.begin lets them. False: Python must
 * draw (a waiting hart would wake, with a trap Python records and matches). */
static bool next_hart(struct turn_state *t, hart **harts, struct draw *d, uint32_t *k,
                      uint64_t *quantum)
{
    for (uint32_t tries = 0; tries < 64 * t->harts; tries++) {
        draw_next(d, t, k, quantum);
        if (!t->waiting[*k])
            return true;
        hart *w = harts[*k];
        set_clock(w, t->clock_ns);
        if (mip_value(w) & w->mie)
            return false;
    }
    return false;
}

/* Machine.run's set-up of a turn's run, for `quantum` instructions. */
static void begin_run(struct turn_state *t, hart *h, uint64_t quantum)
{
    h->s.budget = h->s.instret + quantum;
    h->s.budget_exact = 0;
    h->s.record_events = 1;
    h->s.poll_at = t->poll_insns ? h->s.instret + t->poll_insns : UNLIMITED;
    hart_update(h);
}

/* Run the current hart's turn (set up by Python) and the turns after it while nothing
 * needs Python; returns the last engine's uc_err, with t->current the hart it ran. */
int turns_chain(struct turn_state *t, hart **harts, struct codesync *sync)
{
    for (;;) {
        hart *h = harts[t->current];
        uc_err err = uc_emu_start(h->uc, reg(h, UC_RISCV_REG_PC), h->xmask, 0, 0);
        t->ran_mask |= 1u << t->current;
        if (err != UC_ERR_OK || h->s.stop_reason != STOP_BUDGET || t->attention)
            return err;
        if (h->s.instret < h->s.budget || !turn_over(h, t->turn_end))
            return err;                /* Python steps to the budget, or ends the run */
        uint64_t total = total_instret(t, harts);
        if (total >= t->insn_limit || total >= t->look_at)
            return err;
        if (h->s.ev_len > t->ev_cap - t->ev_len)
            return err;
        uint64_t clock_ns = (h->s.instret << h->s.icount_shift) + h->s.idle_ns;
        t->clock_ns = clock_ns;
        struct draw d = draw_from(t);
        uint32_t k;
        uint64_t quantum;
        if (!next_hart(t, harts, &d, &k, &quantum))
            return err;

        /* The run of hart `current` closes as Machine.run's does. */
        if (h->s.ev_len) {
            struct hart_event *store = (struct hart_event *)(uintptr_t)t->ev_buf;
            memcpy(store + t->ev_len, h->events, h->s.ev_len * sizeof *store);
            t->ev_len += h->s.ev_len;
            h->s.ev_len = 0;
        }
        h->s.stop_reason = STOP_NONE;
        h->s.budget = UNLIMITED;
        h->s.poll_at = UNLIMITED;
        h->s.budget_exact = 0;
        /* HartTurns.end: switched out, its LR reservation goes (writing PRIV clears
         * it, docs/unicorn.md), and the others hear what it wrote on their code. */
        uint64_t priv;
        uc_reg_read(h->uc, UC_RISCV_REG_PRIV, &priv);
        uc_reg_write(h->uc, UC_RISCV_REG_PRIV, &priv);
        if (sync)
            codesync_turn_ended(sync, t->current);

        /* HartTurns.begin: the drawn hart's turn. */
        draw_commit(t, &d);
        hart *next = harts[k];
        set_clock(next, clock_ns);
        if (sync)
            codesync_turn_begins(sync, k);
        t->current = k;
        t->turn_end = next->s.instret + quantum;
        next->s.others_instret = total - next->s.instret;
        uint64_t left = t->insn_limit == M64 ? M64 : t->insn_limit - total;
        begin_run(t, next, quantum < left ? quantum : left);
        t->chained++;
    }
}
