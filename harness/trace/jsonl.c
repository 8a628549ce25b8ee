/*
 * jsonl.c: JSON Lines from the native core's event records, for
 * harness/trace/jsonl.py's JsonlWriter (`privlab run --trace-out FILE.jsonl`) and
 * RowsJsonl (`privlab trace --format jsonl`, the rows with who and where added).
 *
 * Each record becomes the line Python's json.dumps(event_json(event, harts)) writes
 * (harness/machine/events.py): the same keys in the same order, ", " and ": " between
 * them. Formatting a million traps' lines in Python cost 45 us a trap, a hundred times
 * the trap itself; here a line is a few hundred bytes copied and a dozen numbers
 * converted. The strings (cause names, privilege letters, mret/sret) are not restated
 * here: Python hands them over already JSON-quoted, from harness/abi.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "trace_gen.h"

/* The strings a line needs, as Python made them (each JSON-quoted, NUL-ended). */
struct jsonl_words {
    const char *const *cause;    /* [interrupt * ncodes + code]; NULL: not named here */
    uint32_t ncodes;
    const char *const *letter;   /* [privilege]; NULL: not a privilege */
    const char *xret[2];         /* by code: mret, sret */
};

static char *put(char *p, const char *s)
{
    size_t n = strlen(s);    /* a literal's length is known at compile time */
    memcpy(p, s, n);
    return p + n;
}

/* v in decimal, two digits at a time: a line has a dozen numbers of up to 20 digits,
 * and converting them is most of a line's cost. */
static char *put_u64(char *p, uint64_t v)
{
    static const char pairs[] =
        "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
        "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
        "8081828384858687888990919293949596979899";
    char tmp[20];
    char *q = tmp + sizeof tmp;
    while (v >= 100) {
        unsigned d = (unsigned)(v % 100) * 2;
        v /= 100;
        *--q = pairs[d + 1];
        *--q = pairs[d];
    }
    if (v >= 10) {
        *--q = pairs[v * 2 + 1];
        *--q = pairs[v * 2];
    } else {
        *--q = (char)('0' + v);
    }
    size_t n = (size_t)(tmp + sizeof tmp - q);
    memcpy(p, q, n);
    return p + n;
}

static char *put_i64(char *p, int64_t v)
{
    if (v < 0) {
        *p++ = '-';
        return put_u64(p, (uint64_t)0 - (uint64_t)v);
    }
    return put_u64(p, (uint64_t)v);
}

/* `, "key": value`: one member after the first. */
static char *put_num(char *p, const char *key, uint64_t v)
{
    p = put(put(put(p, ", \""), key), "\": ");
    return put_u64(p, v);
}

static char *put_str(char *p, const char *key, const char *json)
{
    p = put(put(put(p, ", \""), key), "\": ");
    return put(p, json);
}

/* The members of record e (event #seq) as its line's object starts: `{"kind": ...`
 * up to its last member, the closing brace not written. NULL (nothing written) for a
 * record whose strings the table lacks (a reserved cause, an unknown privilege). */
static char *put_event(char *p, const struct hart_event *e, int64_t seq, uint32_t harts,
                       const struct jsonl_words *w)
{
    const char *from = e->priv_from < 4 ? w->letter[e->priv_from] : NULL;
    const char *to = e->priv_to < 4 ? w->letter[e->priv_to] : NULL;
    if (!from || !to)
        return NULL;
    if (e->kind == EV_TRAP) {
        const char *name = e->code < w->ncodes
            ? w->cause[(e->interrupt ? w->ncodes : 0) + e->code] : NULL;
        if (!name)
            return NULL;
        p = put(p, "{\"kind\": \"trap\", \"seq\": ");
        p = put_i64(p, seq);
        p = put_num(p, "instret", e->instret);
        p = put(p, e->interrupt ? ", \"interrupt\": true, \"code\": "
                                : ", \"interrupt\": false, \"code\": ");
        p = put_u64(p, e->code);
        p = put_num(p, "cause", e->cause);
        p = put_str(p, "name", name);
        p = put_num(p, "epc", e->epc);
        p = put_num(p, "tval", e->tval);
        p = put_str(p, "from", from);
        p = put_str(p, "to", to);
        p = put_num(p, "vector", e->pc);
    } else {
        p = put(p, "{\"kind\": \"xret\", \"seq\": ");
        p = put_i64(p, seq);
        p = put_num(p, "instret", e->instret);
        p = put_str(p, "insn", w->xret[e->code ? 1 : 0]);
        p = put_str(p, "from", from);
        p = put_str(p, "to", to);
        p = put_num(p, "pc", e->pc);
        p = put_num(p, "at", e->epc);
    }
    p = put_num(p, "status_before", e->status_before);
    p = put_num(p, "status_after", e->status_after);
    if (harts > 1) {
        p = put_num(p, "hart", e->hart);
    }
    return p;
}

/* Format records raw[0..n) (event #seq on) into out, which holds at least
 * n * line_max bytes (line_max: harness/trace/jsonl.py's LINE_MAX). Stops before
 * a record whose strings the table lacks, which Python formats itself. Returns the
 * bytes written; *done is the records formatted. */
size_t jsonl_format(const char *raw, size_t n, int64_t seq, uint32_t harts,
                    const struct jsonl_words *w, char *out, size_t *done)
{
    char *p = out;
    size_t i;
    for (i = 0; i < n; i++) {
        struct hart_event e;
        memcpy(&e, raw + i * sizeof e, sizeof e);   /* records may sit at any alignment */
        char *end = put_event(p, &e, seq + (int64_t)i, harts, w);
        if (!end)
            break;
        p = put(end, "}\n");
    }
    *done = i;
    return (size_t)(p - out);
}

/* `privlab trace --format jsonl`: the rows a trace shows, which are not every event
 * and say more than the record does. Record raw[i] is event #seqs[i]; its line ends
 * with tails[i], the members Python knows (who, pid, location: `, "owner": ...}\n`)
 * and any line that follows the event's (a system call it completed), the tails one
 * after another in one block, each ended by a NUL (JSON text never holds a raw NUL).
 * out holds at least n * line_max bytes and the tails' length. Stops before a record
 * whose strings the table lacks, as jsonl_format does; *done is the rows formatted. */
size_t jsonl_rows(const char *raw, size_t n, const int64_t *seqs, uint32_t harts,
                  const struct jsonl_words *w, const char *tails, char *out, size_t *done)
{
    char *p = out;
    size_t i;
    for (i = 0; i < n; i++) {
        struct hart_event e;
        memcpy(&e, raw + i * sizeof e, sizeof e);
        char *end = put_event(p, &e, seqs[i], harts, w);
        if (!end)
            break;
        size_t len = strlen(tails);
        memcpy(end, tails, len);
        p = end + len;
        tails += len + 1;
    }
    *done = i;
    return (size_t)(p - out);
}

/* ---- Rows made here whole: `privlab trace --format jsonl` at full speed ----
 *
 * jsonl_rows above still needs a tail per row from Python, and the rows themselves
 * (harness/trace/stream.py) cost Python a few microseconds each, twenty times a trap.
 * jsonl_flow makes the rows of a stretch of events with no Python per row: each
 * row's tail comes from a cache of the tails Python made (a trap-heavy run shows the
 * same few processes and places row after row), and each system call's line is made
 * here from the pairer's records of the call and of its return. It stops before the
 * first event it cannot show exactly as Python would (an action other than a return,
 * a call Python holds the record of, an argument shown by name), and Python goes on
 * from there; the lines are those of harness/trace/jsonl.py's row_json and
 * syscall_json (tests/trace check the two paths against each other). */


/* struct jsonl_calls (trace_gen.h): what a call's line needs to know of its number. */

/* A row's tail (`, "owner": ...}\n`), which depends on whose address space the row
 * belongs to, where it happened and whether it touches U, and holds for the events
 * lo <= seq < hi (an address space's owner may change: Python says for how long). */
struct tail {
    uint64_t owner, satp, at;
    int64_t lo, hi;
    uint32_t user, len;
    char *text;              /* NULL: a free slot */
};

#define TAILS 4096           /* slots; cleared when three quarters are used */

struct jsonl_tails {
    struct tail slot[TAILS];
    size_t used;
};

static size_t tail_hash(uint64_t owner, uint64_t satp, uint64_t at, uint32_t user)
{
    uint64_t h = owner * 0x9e3779b97f4a7c15ull ^ satp * 0xc2b2ae3d27d4eb4full ^
                 at * 0x165667b19e3779f9ull ^ user;
    return (size_t)(h ^ h >> 29) % TAILS;
}

static struct tail *tail_slot(struct jsonl_tails *t, uint64_t owner, uint64_t satp,
                              uint64_t at, uint32_t user)
{
    size_t i = tail_hash(owner, satp, at, user);
    while (t->slot[i].text && (t->slot[i].owner != owner || t->slot[i].satp != satp ||
                               t->slot[i].at != at || t->slot[i].user != user))
        i = (i + 1) % TAILS;
    return &t->slot[i];
}

void jsonl_tails_clear(struct jsonl_tails *t)
{
    for (size_t i = 0; i < TAILS; i++) {
        free(t->slot[i].text);
        t->slot[i].text = NULL;
    }
    t->used = 0;
}

struct jsonl_tails *jsonl_tails_new(void)
{
    return calloc(1, sizeof(struct jsonl_tails));
}

void jsonl_tails_free(struct jsonl_tails *t)
{
    if (t) {
        jsonl_tails_clear(t);
        free(t);
    }
}

/* Remember `text` as the tail of rows so placed in events lo..hi; -1: no memory. */
int jsonl_tails_put(struct jsonl_tails *t, uint64_t owner, uint64_t satp, uint64_t at,
                    uint32_t user, int64_t lo, int64_t hi, const char *text)
{
    if (t->used >= TAILS / 4 * 3)
        jsonl_tails_clear(t);
    size_t len = strlen(text);
    char *copy = malloc(len + 1);
    if (!copy)
        return -1;
    memcpy(copy, text, len + 1);
    struct tail *s = tail_slot(t, owner, satp, at, user);
    if (s->text)
        free(s->text);
    else
        t->used++;
    *s = (struct tail){owner, satp, at, lo, hi, user, (uint32_t)len, copy};
    return 0;
}

static char *put_hex(char *p, uint64_t v)
{
    char tmp[16];
    int n = 0;
    do {
        tmp[n++] = "0123456789abcdef"[v & 15];
        v >>= 4;
    } while (v);
    *p++ = '0';
    *p++ = 'x';
    while (n)
        *p++ = tmp[--n];
    return p;
}

/* Argument v as the call text shows it (a FORM_* other than FORM_TEXT). */
static char *put_arg(char *p, uint64_t v, uint8_t form, uint32_t xlen)
{
    switch (form) {
    case FORM_INT:
        if (xlen < 64) {
            uint64_t mask = (1ull << xlen) - 1, sign = 1ull << (xlen - 1);
            v &= mask;
            return put_i64(p, (v & sign) ? (int64_t)(v | ~mask) : (int64_t)v);
        }
        return put_i64(p, (int64_t)v);
    case FORM_UINT:
        return put_u64(p, v);
    case FORM_POINTER:
        return v ? put_hex(p, v) : put(p, "NULL");
    default:
        return put_hex(p, v);
    }
}

#define CALL_LINE_MAX 1024   /* numbers, and a name of at most 100 bytes (Python checks) */
/* NOBODY (trace_gen.h): a pid that is not known, written null. */

/* The line of call c, which returned as action a says, made by process pid. */
static char *put_call(char *p, const struct pair_call *c, const struct pair_action *a,
                      int64_t pid, const struct jsonl_calls *cw)
{
    int named = c->number < cw->numbers && cw->name[c->number];
    unsigned n = named ? cw->nargs[c->number] : 6;
    p = put(p, "{\"kind\": \"syscall\", \"seq\": ");
    p = put_i64(p, c->seq);
    p = put(p, ", \"exit_seq\": ");
    p = put_i64(p, a->seq);
    p = put_num(p, "instret", c->instret);
    p = put_num(p, "number", c->number);
    p = put(p, ", \"name\": \"");
    char *name = p;
    if (named) {
        p = put(p, cw->name[c->number]);
    } else {
        p = put_u64(put(p, "syscall_"), c->number);
    }
    size_t name_len = (size_t)(p - name);
    p = put(p, "\", \"args\": [");
    for (unsigned i = 0; i < n; i++) {
        if (i)
            p = put(p, ", ");
        p = put_u64(p, c->args[i]);
    }
    p = put(p, "], \"call\": \"");
    memmove(p, name, name_len);   /* the text begins with the name */
    p += name_len;
    *p++ = '(';
    for (unsigned i = 0; i < n; i++) {
        if (i)
            p = put(p, ", ");
        p = put_arg(p, c->args[i], named ? cw->form[c->number * 6 + i] : FORM_HEX, cw->xlen);
    }
    p = put(p, ")\", \"ret\": ");
    p = put_i64(p, a->ret);
    p = put(p, a->c ? ", \"outcome\": \"new image\", \"pid\": "
                    : ", \"outcome\": \"returned\", \"pid\": ");
    p = pid == NOBODY ? put(p, "null") : put_i64(p, pid);
    return put(p, "}\n");
}

/* Why jsonl_flow stopped (progress[3]): FLOW_* (trace_gen.h). FLOW_TAIL: event
 * progress[0] needs its tail (jsonl_tails_put, then call again); FLOW_PYTHON: Python
 * shows event progress[0] and what follows. */

static int64_t pid_of(uint64_t satp, const uint64_t *pid_satp, const int64_t *pids,
                      size_t npids, int *found)
{
    for (size_t i = 0; i < npids; i++) {
        if (pid_satp[i] == satp) {
            *found = 1;
            return pids[i];
        }
    }
    *found = 0;
    return NOBODY;
}

/* The call returned by action a, if this function may write its line; NULL if not
 * (Python holds its record, its fork may still return in the child, or one of its
 * arguments is shown by name). */
static const struct pair_call *returned_call(const struct pair_action *a, const char *calls,
                                             size_t ncalls, int64_t base, int64_t own_from,
                                             const struct jsonl_calls *cw)
{
    if (a->op != ACT_RETURN || a->id < own_from || a->id - base >= (int64_t)ncalls)
        return NULL;
    const struct pair_call *c = (const struct pair_call *)
        (const void *)(calls + (size_t)(a->id - base) * sizeof(struct pair_call));
    if (c->number < cw->numbers && cw->name[c->number]) {
        if ((cw->flags[c->number] & CALL_FORK) && a->ret >= 0)
            return NULL;
        for (unsigned i = 0; i < cw->nargs[c->number]; i++)
            if (cw->form[c->number * 6 + i] == FORM_TEXT)
                return NULL;
    }
    return c;
}

/* Rows of events raw[0..n) (event #first on; owners[i]: the owner shape.c gave
 * each), and the lines of the calls they return from. calls[0..ncalls) are the
 * pairer's calls numbered from base, of which this function writes those numbered
 * own_from on (returned[id - base] is set for each); acts[0..nacts) its actions,
 * from the first one of these events. pid_satp/pids: the process of each address
 * space a call was made in (NOBODY: not known). Writes at most `room` bytes to out,
 * a row taking at most line_max bytes and its tail (harness/trace/jsonl.py's LINE_MAX).
 * progress: [0] events formatted, [1] actions consumed, [2] lines written, [3] why
 * it stopped (FLOW_*). Returns the bytes written. The caller keeps the alignment of
 * calls and acts (Python's bytes objects are aligned). */
size_t jsonl_flow(struct jsonl_tails *t, const char *raw, size_t n, int64_t first,
                  const uint64_t *owners, const char *calls, size_t ncalls, int64_t base,
                  int64_t own_from, const char *acts, size_t nacts,
                  const uint64_t *pid_satp, const int64_t *pids, size_t npids,
                  uint32_t harts, const struct jsonl_words *w, const struct jsonl_calls *cw,
                  uint8_t *returned, size_t line_max, char *out, size_t room,
                  size_t *progress)
{
    char *p = out;
    size_t i, k = 0, lines = 0;
    uint32_t stop = FLOW_ALL;
    /* later[j]: the earliest event actions j.. concern. The pairer may conclude
     * something of an event some events after it (that a sigreturn will not return,
     * whose line follows its ecall's row): a row is written here only when no action
     * still to come concerns it, but for the return it is. */
    int64_t *later = malloc((nacts + 1) * sizeof *later);
    if (!later) {
        progress[0] = progress[1] = progress[2] = 0;
        progress[3] = FLOW_PYTHON;
        return 0;
    }
    later[nacts] = INT64_MAX;
    for (size_t j = nacts; j-- > 0;) {
        const struct pair_action *aj =
            (const struct pair_action *)(const void *)(acts + j * sizeof *aj);
        int64_t concern = aj->seq;
        if (aj->op == ACT_NORETURN && aj->id >= base && aj->id - base < (int64_t)ncalls) {
            /* its line follows the ecall's row (a sigreturn found not to return) */
            const struct pair_call *cj = (const struct pair_call *)
                (const void *)(calls + (size_t)(aj->id - base) * sizeof(struct pair_call));
            if (cj->seq < concern)
                concern = cj->seq;
        }
        later[j] = concern < later[j + 1] ? concern : later[j + 1];
    }
    for (i = 0; i < n; i++) {
        int64_t seq = first + (int64_t)i;
        struct hart_event e;
        memcpy(&e, raw + i * sizeof e, sizeof e);
        /* the call this event returns from, if any, and nothing else */
        const struct pair_action *a = NULL;
        const struct pair_call *c = NULL;
        int64_t pid = NOBODY;
        if (later[k] <= seq) {
            const struct pair_action *next =
                (const struct pair_action *)(const void *)(acts + k * sizeof *next);
            int found = 0;
            if (next->seq == seq && later[k + 1] > seq) {
                a = next;
                c = returned_call(a, calls, ncalls, base, own_from, cw);
                if (c)
                    pid = pid_of(c->satp, pid_satp, pids, npids, &found);
            }
            if (!c || !found) {      /* Python applies it where the rows are */
                stop = FLOW_PYTHON;
                break;
            }
        }
        uint32_t user = e.priv_from == PRV_U || e.priv_to == PRV_U;
        uint64_t at = e.kind == EV_TRAP ? e.epc : e.pc;
        struct tail *tl = tail_slot(t, owners[i], e.satp, at, user);
        if (!tl->text || seq < tl->lo || seq >= tl->hi) {
            stop = FLOW_TAIL;
            break;
        }
        if ((size_t)(p - out) + line_max + tl->len + (a ? CALL_LINE_MAX : 0) > room) {
            stop = FLOW_FULL;
            break;
        }
        char *end = put_event(p, &e, seq, harts, w);
        if (!end) {
            stop = FLOW_PYTHON;
            break;
        }
        memcpy(end, tl->text, tl->len);
        p = end + tl->len;
        lines++;
        if (a) {
            p = put_call(p, c, a, pid, cw);
            returned[a->id - base] = 1;
            lines++;
            k++;
        }
    }
    free(later);
    progress[0] = i;
    progress[1] = k;
    progress[2] = lines;
    progress[3] = stop;
    return (size_t)(p - out);
}
