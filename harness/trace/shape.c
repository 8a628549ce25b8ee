/*
 * shape.c: the nesting of a trap flow, for harness/trace/flow.py.
 *
 * A trap flow shows, for every trap and xRET, which trap an xRET returns from, the
 * outermost trap of the nesting it belongs to (its root), the privilege path after it
 * (U>S>M: one level per trap still open) and the address space that owns it. All of
 * that follows from the events alone, in order, one stack of open traps per hart.
 * It is the one loop of a trace that touches every event, so it lives here rather
 * than in Python: a syscall-heavy run has hundreds of thousands of events, and
 * shaping them in Python cost more than a third of all tracing did.
 *
 * Paths are interned: each distinct path gets a small id, its parent's id and the
 * privilege it adds kept in a table Python reads to build the tuples it shows.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "grow.h"
#include "trace_gen.h"

#define NONE (-1)
#define PRIVS 4          /* privilege encodings: PRV_U 0, PRV_S 1, (2 reserved), PRV_M 3 */

/* One level of a hart's nesting: the hart runs at `priv` there, entered by trap
 * `trap` (NONE for the bottom level, or after an xRET left a level the flow never
 * saw entered), in the nesting rooted at trap `root`. */
struct level {
    int64_t trap;
    int64_t root;
    uint64_t owner;      /* satp of the process whose trap from U is the root (0: none) */
    uint32_t path;
    uint8_t priv;
};

struct nesting {
    struct level *v;
    size_t n, cap;
};

struct shaper {
    uint8_t initial;             /* every hart starts at this privilege */
    struct nesting *harts;       /* by mhartid */
    size_t nharts;
    uint32_t current;            /* hart of the last event shaped */
    /* the path table: parent id (NONE: the empty path) and the privilege added */
    int32_t *parent;
    uint8_t *priv;
    int32_t *child;              /* child[id * PRIVS + priv]: that path's id, or NONE */
    int32_t root_child[PRIVS];   /* the one-level paths */
    uint32_t npaths, cap;
    int failed;                  /* out of memory once: every later call fails */
};

/* The id of path `parent` + (priv,), interned on first use; NONE when out of memory. */
static int32_t path_id(struct shaper *s, int32_t parent, uint8_t priv)
{
    int32_t *slot = parent == NONE ? &s->root_child[priv & 3]
                                   : &s->child[(size_t)parent * PRIVS + (priv & 3)];
    if (*slot != NONE)
        return *slot;
    if (s->npaths == s->cap) {
        uint32_t cap = s->cap ? s->cap * 2 : 64;
        int32_t *par = realloc(s->parent, cap * sizeof *par);
        if (par)
            s->parent = par;
        uint8_t *pr = realloc(s->priv, cap * sizeof *pr);
        if (pr)
            s->priv = pr;
        int32_t *ch = realloc(s->child, (size_t)cap * PRIVS * sizeof *ch);
        if (ch)
            s->child = ch;
        if (!par || !pr || !ch)
            return NONE;
        memset(s->child + (size_t)s->cap * PRIVS, 0xff,
               (size_t)(cap - s->cap) * PRIVS * sizeof *ch);
        s->cap = cap;
        /* the slot may have moved with the table */
        slot = parent == NONE ? &s->root_child[priv & 3]
                              : &s->child[(size_t)parent * PRIVS + (priv & 3)];
    }
    int32_t id = (int32_t)s->npaths++;
    s->parent[id] = parent;
    s->priv[id] = priv;
    *slot = id;
    return id;
}

/* Hart `hart`'s nesting, created at the initial privilege on first use. */
static struct nesting *nesting_of(struct shaper *s, uint32_t hart)
{
    if (hart >= s->nharts) {
        struct nesting *h = realloc(s->harts, (hart + 1) * sizeof *h);
        if (!h)
            return NULL;
        memset(h + s->nharts, 0, (hart + 1 - s->nharts) * sizeof *h);
        s->harts = h;
        s->nharts = hart + 1;
    }
    struct nesting *n = &s->harts[hart];
    if (n->n == 0) {
        int32_t path = path_id(s, NONE, s->initial);
        if (path == NONE || grow_array((void **)&n->v, &n->cap, 1, sizeof *n->v))
            return NULL;
        n->v[0] = (struct level){NONE, NONE, 0, (uint32_t)path, s->initial};
        n->n = 1;
    }
    return n;
}

/* The top level turns out to run at `priv` after all (an event the flow did not see
 * changed it): same trap and root, the path rebuilt under the level below. */
static int retop(struct shaper *s, struct nesting *n, uint8_t priv, int64_t trap,
                 int64_t root, uint64_t owner)
{
    int32_t parent = n->n > 1 ? (int32_t)n->v[n->n - 2].path : NONE;
    int32_t path = path_id(s, parent, priv);
    if (path == NONE)
        return -1;
    n->v[n->n - 1] = (struct level){trap, root, owner, (uint32_t)path, priv};
    return 0;
}

struct shaper *shaper_new(uint8_t initial)
{
    struct shaper *s = calloc(1, sizeof *s);
    if (!s)
        return NULL;
    s->initial = initial;
    for (int i = 0; i < PRIVS; i++)
        s->root_child[i] = NONE;
    if (!nesting_of(s, 0)) {
        free(s);
        return NULL;
    }
    return s;
}

void shaper_free(struct shaper *s)
{
    if (!s)
        return;
    for (size_t i = 0; i < s->nharts; i++)
        free(s->harts[i].v);
    free(s->harts);
    free(s->parent);
    free(s->priv);
    free(s->child);
    free(s);
}

/* Shape `count` event records, the first being event #first. For each, when the
 * array is given: the trap an xRET returns from (NONE: a trap, or none seen), the
 * root (NONE: none), the path id, the owner, and the open traps on its hart after
 * it. A return to U belongs to the process it enters; every other event to the one
 * whose trap began the nesting. Returns 0, or -1 when out of memory (the shaper is
 * then unusable). */
int shaper_run(struct shaper *s, const void *records, size_t count, int64_t first,
               int64_t *returns, int64_t *roots, uint32_t *paths, uint64_t *owners,
               uint32_t *depths)
{
    if (s->failed)
        return -1;
    const char *at = records;
    struct nesting *n = nesting_of(s, s->current);
    for (size_t i = 0; i < count && n; i++) {
        struct hart_event e;
        memcpy(&e, at + i * sizeof e, sizeof e);    /* records may sit at any alignment */
        int64_t seq = first + (int64_t)i;
        if (e.hart != s->current) {
            n = nesting_of(s, e.hart);
            if (!n)
                break;
            s->current = e.hart;
        }
        int64_t opened = NONE, root;
        uint64_t owner;
        struct level *top = &n->v[n->n - 1];
        if (e.kind == EV_TRAP) {
            if (top->priv != e.priv_from &&
                retop(s, n, e.priv_from, top->trap, top->root, top->owner))
                goto oom;
            top = &n->v[n->n - 1];
            if (n->n > 1) {
                root = top->root;
                owner = top->owner;
            } else {
                root = seq;
                owner = e.priv_from == PRV_U ? e.satp : 0;
            }
            int32_t path = path_id(s, (int32_t)top->path, e.priv_to);
            if (path == NONE || grow_array((void **)&n->v, &n->cap, n->n + 1, sizeof *n->v))
                goto oom;
            n->v[n->n++] = (struct level){seq, root, owner, (uint32_t)path, e.priv_to};
        } else {
            root = NONE;
            owner = 0;
            if (n->n > 1 && top->priv == e.priv_from) {
                opened = top->trap;
                root = top->root;
                owner = top->owner;
                n->n--;
                top = &n->v[n->n - 1];
            }
            if (n->n > 1) {
                root = top->root;
                owner = top->owner;
            }
            if (top->priv != e.priv_to && retop(s, n, e.priv_to, NONE, NONE, 0))
                goto oom;
            if (e.priv_to == PRV_U)
                owner = e.satp;
        }
        if (returns)
            returns[i] = opened;
        if (roots)
            roots[i] = root;
        if (paths)
            paths[i] = n->v[n->n - 1].path;
        if (owners)
            owners[i] = owner;
        if (depths)
            depths[i] = (uint32_t)(n->n - 1);
    }
    if (n)
        return 0;
oom:
    s->failed = 1;
    return -1;
}

/* Paths interned so far; path `id`'s parent (NONE: none) and the privilege it adds. */
uint32_t shaper_paths(const struct shaper *s)
{
    return s->npaths;
}

void shaper_path(const struct shaper *s, uint32_t id, int32_t *parent, uint8_t *priv)
{
    *parent = id < s->npaths ? s->parent[id] : NONE;
    *priv = id < s->npaths ? s->priv[id] : 0;
}

/* Traps open on the hart of the last event shaped. */
uint32_t shaper_depth(const struct shaper *s)
{
    return s->current < s->nharts ? (uint32_t)(s->harts[s->current].n - 1) : 0;
}
