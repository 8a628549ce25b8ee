/*
 * pairer.c: system calls paired with their returns, for harness/trace/flow.py.
 *
 * A trap flow decodes every ecall from U as a system call and finds the sret that
 * returns from it: the one back into the same thread at the ecall's pc + 4. The rules
 * are those flow.py's module comment gives (calls that switch processes, exit, exec,
 * fork's child, signal and alarm handlers). They need every event, in order, and
 * nothing else, so they run here: done in Python they were most of what tracing a
 * syscall-heavy run cost (about 2 us per event).
 *
 * The pairer keeps only what later events are checked against: per thread (its
 * address space and thread id) the call awaiting its return, where its last trap from
 * U returns to, its alarm handler, its last timer tick and the signal handlers
 * running; the forks whose child has not run yet; the signals sent and not yet seen
 * delivered; and which address space belongs to which pid, as Python tells it. What
 * it concludes goes out as the calls made (struct pair_call, numbered in the order
 * they were made) and a list of actions (struct pair_action) that flow.py applies,
 * in order, to its SyscallRecords and notes. A call is kept here by value wherever
 * it is waited for, so a finished call costs nothing.
 *
 * Calls and actions come in two lists because nearly every action is a return: a
 * call's record is made from its own list in one tight loop. Only a change of owner
 * (DISOWN, MOVE) must come between the calls made before it and those after, as the
 * owner at the ecall names the call's process: each says how many calls were made
 * by the next one (in its `id`), and a run says how many by the first (`*upto`).
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "grow.h"
#include "trace_gen.h"   /* struct hart_event, pair_call, pair_action; CALL_*, ACT_* */


/* The kinds of call the rules tell apart (CALL_*), the actions flow.py is told
 * (ACT_*; one event may give several, in the order they apply), and the records of a
 * call made and of an action are harness/abi/pairing.py's, generated into
 * trace_gen.h with what each field holds. */

/* A call as it is waited for. */
struct callref {
    int64_t id;
    uint64_t epc, satp;
    uint32_t tid;
    uint16_t flags;
    uint8_t pending;      /* neither returned nor known not to */
    uint8_t has_ret;
    int64_t ret;
};

struct handler {
    uint32_t signum;      /* ALARM for an alarm handler */
    uint8_t has_call;
    uint64_t resume;      /* the interrupted pc: where its end returns to */
    struct callref call;  /* the system call it interrupted, to return then */
};

struct thread {
    uint64_t satp;
    uint32_t tid;
    uint8_t has_open, has_resume, resume_fault, has_alarm, has_tick, entered;
    struct callref open;          /* the call awaiting its return */
    uint64_t resume_pc;           /* where the last trap from U returns to ... */
    int64_t resume_seq;           /* ... and its seq; resume_fault: a fault, no pc */
    uint64_t alarm;               /* the handler the last sigalarm set */
    int64_t tick;                 /* seq of the last timer interrupt from U */
    struct handler *h;            /* the handlers running, innermost last */
    size_t nh, caph;
};

struct forks {
    uint64_t pc;                  /* the return address of these forks */
    struct callref *v;            /* oldest first */
    size_t n, cap;
};

struct owner {
    uint64_t satp;
    int64_t pid;
    uint8_t valid;
};

/* Open addressing from a (u64, u32) key to an index into one of the arrays above. */
struct map {
    uint64_t *k;
    uint32_t *t, *v;              /* v: index + 1 (0: empty slot) */
    size_t cap, n;
};

struct pairer {
    uint8_t *flags;               /* by system call number */
    size_t nflags;
    uint64_t catchable;           /* bit n: signal n can be caught */
    unsigned xlen;
    int64_t calls;                /* calls made so far: the next call's id */
    struct map thread_map, fork_map, owner_map;
    struct thread *threads;
    size_t nthreads, cap_threads;
    struct forks *forks;
    size_t nforks, cap_forks;
    struct owner *owners;
    size_t nowners, cap_owners;
    uint32_t sent[SIGNALS];       /* kills per signal not yet seen delivered */
    uint8_t has_last;
    struct callref last;          /* the last trap from U, if it was an ecall */
    /* the calls made and the actions of the current run */
    struct pair_call *made;
    size_t nmade, cap_made;
    struct pair_action *out;
    size_t nout, cap_out;
    size_t cut;               /* the last DISOWN or MOVE + 1, waiting for its count */
    int64_t *upto;            /* where the first one's count goes */
    int failed;
};

static size_t slot_of(uint64_t k, uint32_t t, size_t cap)
{
    uint64_t x = (k ^ ((uint64_t)t << 32) ^ (k >> 29)) * 0x9e3779b97f4a7c15ull;
    return (size_t)(x >> 17) & (cap - 1);
}

/* Index + 1 of key (k, t) in the map, 0 if absent. */
static uint32_t map_get(const struct map *m, uint64_t k, uint32_t t)
{
    if (!m->cap)
        return 0;
    for (size_t i = slot_of(k, t, m->cap);; i = (i + 1) & (m->cap - 1)) {
        if (!m->v[i] || (m->k[i] == k && m->t[i] == t))
            return m->v[i];
    }
}

static int map_put(struct map *m, uint64_t k, uint32_t t, uint32_t v);

static int map_grow(struct map *m)
{
    struct map old = *m;
    size_t cap = old.cap ? old.cap * 2 : 64;
    m->k = calloc(cap, sizeof *m->k);
    m->t = calloc(cap, sizeof *m->t);
    m->v = calloc(cap, sizeof *m->v);
    m->cap = cap;
    m->n = 0;
    if (!m->k || !m->t || !m->v) {
        free(m->k), free(m->t), free(m->v);
        *m = old;
        return -1;
    }
    for (size_t i = 0; i < old.cap; i++)
        if (old.v[i])
            map_put(m, old.k[i], old.t[i], old.v[i]);
    free(old.k), free(old.t), free(old.v);
    return 0;
}

static int map_put(struct map *m, uint64_t k, uint32_t t, uint32_t v)
{
    if (2 * (m->n + 1) > m->cap && map_grow(m))
        return -1;
    size_t i = slot_of(k, t, m->cap);
    while (m->v[i] && !(m->k[i] == k && m->t[i] == t))
        i = (i + 1) & (m->cap - 1);
    if (!m->v[i])
        m->n++;
    m->k[i] = k, m->t[i] = t, m->v[i] = v;
    return 0;
}

static void map_free(struct map *m)
{
    free(m->k), free(m->t), free(m->v);
}

/* The state of thread (satp, tid), made empty on first use. */
static struct thread *thread_of(struct pairer *p, uint64_t satp, uint32_t tid)
{
    uint32_t i = map_get(&p->thread_map, satp, tid);
    if (i)
        return &p->threads[i - 1];
    if (grow_array((void **)&p->threads, &p->cap_threads, p->nthreads + 1, sizeof *p->threads) ||
        map_put(&p->thread_map, satp, tid, (uint32_t)p->nthreads + 1))
        return NULL;
    struct thread *th = &p->threads[p->nthreads++];
    th->satp = satp;
    th->tid = tid;
    return th;
}

static struct forks *forks_at(struct pairer *p, uint64_t pc, int create)
{
    uint32_t i = map_get(&p->fork_map, pc, 0);
    if (i)
        return &p->forks[i - 1];
    if (!create ||
        grow_array((void **)&p->forks, &p->cap_forks, p->nforks + 1, sizeof *p->forks) ||
        map_put(&p->fork_map, pc, 0, (uint32_t)p->nforks + 1))
        return NULL;
    struct forks *f = &p->forks[p->nforks++];
    f->pc = pc;
    return f;
}

static struct owner *owner_of(struct pairer *p, uint64_t satp, int create)
{
    uint32_t i = map_get(&p->owner_map, satp, 0);
    if (i)
        return &p->owners[i - 1];
    if (!create ||
        grow_array((void **)&p->owners, &p->cap_owners, p->nowners + 1, sizeof *p->owners) ||
        map_put(&p->owner_map, satp, 0, (uint32_t)p->nowners + 1))
        return NULL;
    struct owner *o = &p->owners[p->nowners++];
    o->satp = satp;
    return o;
}

static struct pair_action *emit(struct pairer *p, uint32_t op, int64_t seq, int64_t id)
{
    if (grow_array((void **)&p->out, &p->cap_out, p->nout + 1, sizeof *p->out)) {
        p->failed = 1;
        return NULL;
    }
    struct pair_action *a = &p->out[p->nout++];
    memset(a, 0, sizeof *a);
    a->op = op;
    a->seq = seq;
    a->id = id;
    return a;
}

/* A change of owner: the calls made so far come before it, the next ones after. */
static void end_cut(struct pairer *p)
{
    if (p->cut)
        p->out[p->cut - 1].id = p->calls;
    else
        *p->upto = p->calls;
}

static struct pair_action *emit_cut(struct pairer *p, uint32_t op, int64_t seq)
{
    end_cut(p);
    struct pair_action *a = emit(p, op, seq, -1);
    if (a)
        p->cut = p->nout;
    return a;
}

static int64_t to_signed(uint64_t v, unsigned bits)
{
    if (bits >= 64)
        return (int64_t)v;
    v &= (1ull << bits) - 1;
    return v >> (bits - 1) ? (int64_t)(v - (1ull << bits)) : (int64_t)v;
}

/* A call that stopped being waited for without an end (a fork's child may still
 * return from it). */
static void forget(struct pairer *p, const struct callref *c)
{
    if (c->pending && !(c->flags & CALL_FORK))
        emit(p, ACT_FORGET, -1, c->id);
}

static void drop_handlers(struct pairer *p, struct thread *th)
{
    for (size_t i = 0; i < th->nh; i++)
        if (th->h[i].has_call)
            forget(p, &th->h[i].call);
    th->nh = 0;
}

/* Call c ended (returned, or will not): the copies still waited on learn it. */
static void settle(struct pairer *p, const struct callref *c)
{
    if (p->has_last && p->last.id == c->id)
        p->last = *c;
    if (c->flags & CALL_FORK) {
        struct forks *f = forks_at(p, c->epc + ECALL_INSN, 0);
        for (size_t i = 0; f && i < f->n; i++)
            if (f->v[i].id == c->id)
                f->v[i] = *c;
    }
}

static void unfork(struct pairer *p, const struct callref *c)
{
    struct forks *f = forks_at(p, c->epc + ECALL_INSN, 0);
    for (size_t i = 0; f && i < f->n; i++)
        if (f->v[i].id == c->id) {
            memmove(&f->v[i], &f->v[i + 1], (f->n - i - 1) * sizeof *f->v);
            f->n--;
            return;
        }
}

static int64_t owner_pid(struct pairer *p, uint64_t satp, int *known)
{
    struct owner *o = owner_of(p, satp, 0);
    *known = o && o->valid;
    return *known ? o->pid : 0;
}

static void disown(struct pairer *p, uint64_t satp)
{
    struct owner *o = owner_of(p, satp, 0);
    if (o)
        o->valid = 0;
}

/* An ecall from U: a system call made. */
static void on_ecall(struct pairer *p, const struct hart_event *e, int64_t seq, uint32_t tid)
{
    uint64_t number = e->a7;
    struct callref c = {p->calls++, e->epc, e->satp, tid,
                        number < p->nflags ? p->flags[number] : 0, 1, 0, 0};
    if (grow_array((void **)&p->made, &p->cap_made, p->nmade + 1, sizeof *p->made)) {
        p->failed = 1;
        return;
    }
    struct pair_call *m = &p->made[p->nmade++];
    *m = (struct pair_call){seq, tid, e->instret, e->epc, e->satp, number, {0}};
    memcpy(m->args, (const char *)e + offsetof(struct hart_event, a0), sizeof m->args);
    p->last = c;
    p->has_last = 1;
    struct thread *th = thread_of(p, e->satp, tid);
    if (!th) {
        p->failed = 1;
        return;
    }
    if (c.flags & CALL_KILL) {
        int64_t signum = to_signed(e->a1, 32);
        if (signum >= 0 && signum < SIGNALS)
            p->sent[signum]++;
    } else if (c.flags & CALL_SIGALARM) {
        th->has_alarm = to_signed(e->a0, 32) > 0;
        th->alarm = e->a1;
    }
    if (c.flags & CALL_NORETURN) {
        c.pending = 0;
        p->last = c;
        struct pair_action *end = emit(p, ACT_NORETURN, seq, c.id);
        if (end)
            end->c = 1;
        if (th->has_open)
            forget(p, &th->open);
        th->has_open = th->has_resume = th->has_alarm = 0;
        drop_handlers(p, th);
        if (tid == 0) {               /* a thread's exit leaves the process */
            disown(p, e->satp);       /* the page table is freed, may be reused */
            struct pair_action *gone = emit_cut(p, ACT_DISOWN, seq);
            if (gone)
                gone->y = e->satp;
        }
        return;
    }
    th->has_resume = 1;
    th->resume_fault = 0;
    th->resume_pc = e->epc + ECALL_INSN;
    th->resume_seq = seq;
    if (th->has_open)
        forget(p, &th->open);
    th->open = c;
    th->has_open = 1;
    if (c.flags & CALL_FORK) {
        struct forks *f = forks_at(p, e->epc + ECALL_INSN, 1);
        if (!f || grow_array((void **)&f->v, &f->cap, f->n + 1, sizeof *f->v)) {
            p->failed = 1;
            return;
        }
        f->v[f->n++] = c;
    }
    return;
}

/* Call c returned at this sret with a0. */
static void returned(struct pairer *p, struct callref *c, const struct hart_event *e,
                     int64_t seq, int image)
{
    c->pending = 0;
    c->has_ret = 1;
    c->ret = to_signed(e->a0, p->xlen);
    struct pair_action *a = emit(p, ACT_RETURN, seq, c->id);
    if (a) {
        a->ret = c->ret;
        a->c = (uint32_t)image;
        a->x = e->instret;
    }
    settle(p, c);
}

/* The fork whose child this sret is: one returning to pc from another address space,
 * the one that returned the child's pid if that is known, else the oldest. */
static int child_of(struct pairer *p, uint64_t pc, uint64_t satp, struct callref *out)
{
    struct forks *f = forks_at(p, pc, 0);
    if (!f || !f->n)
        return 0;
    int known;
    int64_t pid = owner_pid(p, satp, &known);
    for (size_t i = 0; i < f->n; i++) {
        struct callref *c = &f->v[i];
        if (c->satp != satp && (!known || (c->has_ret && c->ret == pid))) {
            *out = *c;
            memmove(c, c + 1, (f->n - i - 1) * sizeof *c);
            f->n--;
            return 1;
        }
    }
    return 0;
}

/* Is the trap this sret returns from the end of a handler: a sigreturn, or the fault
 * a returning handler takes? */
static int ending_handler(const struct thread *th)
{
    return th->resume_fault || (th->has_open && (th->open.flags & CALL_SIGRETURN) &&
                                th->open.epc + ECALL_INSN == th->resume_pc);
}

/* The trap that ended handler h: a sigreturn, which does not return to its caller, or
 * the fault of a handler that returned. */
static void handler_ended(struct pairer *p, struct thread *th, const struct handler *h,
                          int64_t seq)
{
    if (th->has_open && (th->open.flags & CALL_SIGRETURN)) {
        th->has_open = 0;
        th->open.pending = 0;
        emit(p, ACT_NORETURN, seq, th->open.id);
        settle(p, &th->open);
    } else if (th->has_resume && th->resume_fault) {
        struct pair_action *a = emit(p, ACT_SIG_RETURNED, th->resume_seq, -1);
        if (a)
            a->c = h->signum;
    }
}

static int push_handler(struct pairer *p, struct thread *th, struct handler h)
{
    if (grow_array((void **)&th->h, &th->caph, th->nh + 1, sizeof *th->h)) {
        p->failed = 1;
        return -1;
    }
    th->h[th->nh++] = h;
    return 0;
}

/* An sret to U that the call rules do not explain: the end of a signal handler (back
 * at its interrupted pc), the entry to one, or neither. */
static void signal_sret(struct pairer *p, struct thread *th, const struct hart_event *e,
                        int64_t seq)
{
    uint64_t pc = e->pc;
    struct handler *top = th->nh ? &th->h[th->nh - 1] : NULL;
    if (top && pc == top->resume) {
        struct handler h = *top;
        th->nh--;
        handler_ended(p, th, &h, seq);
        struct pair_action *a = emit(p, ACT_SIG_BACK, seq, -1);
        if (a)
            a->c = h.signum;
        if (!h.has_call)
            return;
        returned(p, &h.call, e, seq, 0);
        return;
    }
    if (!th->has_resume)
        return;
    if (th->has_alarm && pc == th->alarm && !th->resume_fault && th->resume_pc != pc &&
        th->has_tick && th->tick == th->resume_seq) {
        struct handler h = {ALARM, 0, th->resume_pc, {0}};
        if (push_handler(p, th, h) == 0)
            emit(p, ACT_SIG_ENTER, seq, -1);   /* c = ALARM */
        return;
    }
    uint64_t signum = e->a0;
    if (signum >= SIGNALS || !(p->catchable >> signum & 1) || !p->sent[signum])
        return;
    p->sent[signum]--;
    struct handler h = {(uint32_t)signum, 0, 0, {0}};
    if (top && ending_handler(th)) {
        /* The handler's end went straight into the next one: same interrupted code. */
        struct handler old = *top;
        th->nh--;
        handler_ended(p, th, &old, seq);
        h.resume = old.resume;
        h.has_call = old.has_call;
        h.call = old.call;
    } else if (!th->resume_fault) {
        h.resume = th->resume_pc;
        if (th->has_open && th->open.epc + ECALL_INSN == th->resume_pc) {
            h.has_call = 1;          /* it returns when the handler is done */
            h.call = th->open;
            th->has_open = 0;
        }
    } else {
        return;
    }
    if (push_handler(p, th, h) == 0) {
        struct pair_action *a = emit(p, ACT_SIG_ENTER, seq, -1);
        if (a)
            a->c = h.signum;
    }
    return;
}

/* An sret to U. */
static void on_sret(struct pairer *p, const struct hart_event *e, int64_t seq, uint32_t tid)
{
    struct thread *th = thread_of(p, e->satp, tid);
    if (!th) {
        p->failed = 1;
        return;
    }
    if (!th->entered) {
        th->entered = 1;
        struct pair_action *a = emit(p, ACT_ENTER, seq, -1);
        if (a)
            a->y = e->satp, a->c = tid;
    }
    uint64_t pc = e->pc;
    if (th->has_open && pc == th->open.epc + ECALL_INSN) {
        struct callref c = th->open;
        th->has_open = 0;
        returned(p, &c, e, seq, 0);
        if (c.ret < 0 && (c.flags & CALL_FORK))   /* no child will return from it */
            unfork(p, &c);
        return;
    }
    struct callref opener = p->last;   /* the trap from U this sret ends the handling of */
    if (p->has_last && (opener.flags & CALL_EXEC) && opener.pending &&
        e->satp != opener.satp && !th->has_open) {
        /* exec succeeded: back in a new address space */
        struct thread *old = thread_of(p, opener.satp, opener.tid);
        th = NULL;                     /* thread_of may have moved the threads */
        if (!old) {
            p->failed = 1;
            return;
        }
        if (old->has_open && old->open.id != opener.id)
            forget(p, &old->open);
        old->has_open = old->has_resume = old->has_alarm = 0;   /* exec ends the alarm */
        drop_handlers(p, old);
        int known;
        int64_t pid = owner_pid(p, opener.satp, &known);
        if (known) {
            disown(p, opener.satp);
            struct owner *o = owner_of(p, e->satp, 1);
            if (!o) {
                p->failed = 1;
                return;
            }
            o->pid = pid;
            o->valid = 1;
            struct pair_action *a = emit_cut(p, ACT_MOVE, seq);
            if (a)
                a->x = opener.satp, a->y = e->satp;
        }
        returned(p, &opener, e, seq, 1);
        return;
    }
    /* Back to where this thread was interrupted (or faulted) from U: a return from
     * that trap, even at a pc where a fork's child would return too (a tick right
     * after a fork returned to its parent). A child's first return comes to a thread
     * that has not trapped yet. */
    int resumes = th->has_resume && th->resume_pc == pc;
    struct callref fork;
    if (!resumes && child_of(p, pc, e->satp, &fork)) {
        emit(p, ACT_CHILD, seq, fork.id);
        return;
    }
    signal_sret(p, th, e, seq);
}

struct pairer *pairer_new(const uint8_t *flags, size_t nflags, uint64_t catchable,
                          unsigned xlen)
{
    struct pairer *p = calloc(1, sizeof *p);
    if (!p)
        return NULL;
    p->flags = malloc(nflags ? nflags : 1);
    if (!p->flags) {
        free(p);
        return NULL;
    }
    memcpy(p->flags, flags, nflags);
    p->nflags = nflags;
    p->catchable = catchable;
    p->xlen = xlen;
    return p;
}

void pairer_free(struct pairer *p)
{
    if (!p)
        return;
    for (size_t i = 0; i < p->nthreads; i++)
        free(p->threads[i].h);
    for (size_t i = 0; i < p->nforks; i++)
        free(p->forks[i].v);
    map_free(&p->thread_map);
    map_free(&p->fork_map);
    map_free(&p->owner_map);
    free(p->threads);
    free(p->forks);
    free(p->owners);
    free(p->flags);
    free(p->out);
    free(p->made);
    free(p);
}

/* Python learnt that process pid owns address space satp. */
int pairer_own(struct pairer *p, uint64_t satp, int64_t pid)
{
    struct owner *o = owner_of(p, satp, 1);
    if (!o)
        return -1;
    o->pid = pid;
    o->valid = 1;
    return 0;
}

/* Pair `count` event records, the first being event #first, in order after the ones
 * paired before; every event from or to U belongs to thread `tid` (0 when the thread
 * is not known). The calls made are in *calls (*ncalls of them, numbered on from
 * those of earlier runs) and the actions in *actions (*nactions) until the next run;
 * *upto: the calls made (counted from the first run) by the first DISOWN or MOVE, or
 * by the end of the run if none. Returns 0, or -1 when out of memory (the pairer is
 * then unusable). */
int pairer_run(struct pairer *p, const void *records, size_t count, int64_t first,
               uint32_t tid, const struct pair_call **calls, size_t *ncalls,
               const struct pair_action **actions, size_t *nactions, int64_t *upto)
{
    p->nout = p->nmade = p->cut = 0;
    p->upto = upto;
    const char *at = records;
    for (size_t i = 0; i < count && !p->failed; i++) {
        struct hart_event e;
        memcpy(&e, at + i * sizeof e, sizeof e);    /* records may sit at any alignment */
        int64_t seq = first + (int64_t)i;
        if (e.kind == EV_TRAP) {
            if (e.priv_from == PRV_U) {
                if (e.code == CAUSE_USER_ECALL && !e.interrupt) {
                    on_ecall(p, &e, seq, tid);
                    continue;
                }
                p->has_last = 0;
                struct thread *th = thread_of(p, e.satp, tid);
                if (!th) {
                    p->failed = 1;
                    break;
                }
                th->has_resume = 1;
                th->resume_fault = !e.interrupt;
                th->resume_pc = e.epc;
                th->resume_seq = seq;
                if (e.interrupt && e.code == IRQ_S_TIMER) {
                    th->has_tick = 1;
                    th->tick = seq;
                }
            } else if (e.priv_from == PRV_S && e.priv_to == PRV_M &&
                       e.code == CAUSE_SUPERVISOR_ECALL && !e.interrupt) {
                struct pair_action *a = emit(p, ACT_SBI, seq, -1);
                if (a)
                    a->x = e.a7, a->y = e.a6;
            }
        } else if (e.priv_to == PRV_U && e.priv_from == PRV_S && e.code) {
            on_sret(p, &e, seq, tid);
        }
    }
    end_cut(p);
    *calls = p->made;
    *ncalls = p->nmade;
    *actions = p->out;
    *nactions = p->nout;
    return p->failed ? -1 : 0;
}
