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
