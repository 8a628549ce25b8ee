/*
 * plt.c: replacing functions libunicorn calls inside itself.
 *
 * libunicorn is built with default visibility, so its calls from one of its functions
 * to another go through its own PLT: pointing a GOT slot at a function of the core
 * makes every such call reach the core instead (pmp.c's PMP check and TLB fill,
 * tlbflush.c's full flush, csrfast.c's CSR access). The core's own calls to those
 * functions go through the core's PLT and still reach libunicorn's, which is how a
 * replacement hands on what it does not handle.
 */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>

#include "hart.h"
#include "portable.h"

#if defined(__ELF__)
#include <elf.h>
#include <link.h>
#include <sys/mman.h>
#include <unistd.h>
#endif

/* portable.h: PRIVLAB_PORTABLE, else on everywhere but x86-64 Linux; always on where
 * libunicorn has no PLT (PRIVLAB_NO_PLT), since nothing can be replaced through it. */
bool portable_mode(void)
{
    static int mode = -1;
    if (mode < 0) {
        const char *env = getenv("PRIVLAB_PORTABLE");
#if defined(__x86_64__) && defined(__linux__)
        mode = env && *env && strcmp(env, "0") != 0;
#else
        mode = !(env && strcmp(env, "0") == 0);
#endif
        mode = mode || no_plt();
    }
    return mode;
}

/* PRIVLAB_NO_PLT=1: behave as on a host whose libunicorn has no PLT to point at the
 * core (a Mach-O libunicorn.2.dylib, macOS), for the tests of what such a host says. */
bool no_plt(void)
{
    static int none = -1;
    if (none < 0) {
        const char *env = getenv("PRIVLAB_NO_PLT");
        none = env && *env && strcmp(env, "0") != 0;
    }
    return none;
}

#if defined(__ELF__)
/* libunicorn as the dynamic linker placed it: where it is loaded, and the tables of its
 * dynamic section that a lookup by name reads. */
struct dynobj {
    ElfW(Addr) base;
    const ElfW(Sym) *symtab;
    const char *strtab;
    const uint32_t *gnu_hash;    /* DT_GNU_HASH, or */
    const uint32_t *sysv_hash;   /* DT_HASH */
    const ElfW(Rela) *jmprel;    /* its PLT's relocations */
    size_t njmprel;
};

struct find_arg {
    uintptr_t inside;
    ElfW(Addr) base;
    const ElfW(Dyn) *dyn;
};

static int find_object(struct dl_phdr_info *info, size_t size, void *data)
{
    struct find_arg *a = data;
    for (unsigned i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *p = &info->dlpi_phdr[i];
        uintptr_t lo = info->dlpi_addr + p->p_vaddr;
        if (p->p_type == PT_LOAD && a->inside >= lo && a->inside < lo + p->p_memsz) {
            for (unsigned j = 0; j < info->dlpi_phnum; j++)
                if (info->dlpi_phdr[j].p_type == PT_DYNAMIC)
                    a->dyn = (const ElfW(Dyn) *)(info->dlpi_addr + info->dlpi_phdr[j].p_vaddr);
            a->base = info->dlpi_addr;
            return 1;
        }
    }
    return 0;
}

/* libunicorn's dynamic tables into `*out`; false when they cannot be found. Found once
 * and kept: the copy kept is published only once complete, and a caller that comes
 * meanwhile (a hart made on another thread) finds the same tables itself. */
static bool unicorn_object(struct dynobj *out)
{
    static struct dynobj kept;
    static int state;   /* 0: not looked for, 2: being kept, 1: kept, -1: not found */
    int known = __atomic_load_n(&state, __ATOMIC_ACQUIRE);
    if (known == 1) {
        *out = kept;
        return true;
    }
    if (known == -1)
        return false;
    struct find_arg a = {.inside = (uintptr_t)(void *)&uc_open};
    struct dynobj found = {0};
    size_t relsz = 0;
    if (dl_iterate_phdr(find_object, &a) && a.dyn) {
        for (const ElfW(Dyn) *d = a.dyn; d->d_tag != DT_NULL; d++) {
            switch (d->d_tag) {
            case DT_SYMTAB: found.symtab = (const ElfW(Sym) *)d->d_un.d_ptr; break;
            case DT_STRTAB: found.strtab = (const char *)d->d_un.d_ptr; break;
            case DT_GNU_HASH: found.gnu_hash = (const uint32_t *)d->d_un.d_ptr; break;
            case DT_HASH: found.sysv_hash = (const uint32_t *)d->d_un.d_ptr; break;
            case DT_JMPREL: found.jmprel = (const ElfW(Rela) *)d->d_un.d_ptr; break;
            case DT_PLTRELSZ: relsz = d->d_un.d_val; break;
            default: break;
            }
        }
    }
    int expected = 0;
    if (!found.symtab || !found.strtab || (!found.gnu_hash && !found.sysv_hash)) {
        __atomic_compare_exchange_n(&state, &expected, -1, false, __ATOMIC_ACQ_REL,
                                    __ATOMIC_ACQUIRE);
        return false;
    }
    found.base = a.base;
    found.njmprel = relsz / sizeof *found.jmprel;
    if (__atomic_compare_exchange_n(&state, &expected, 2, false, __ATOMIC_ACQ_REL,
                                    __ATOMIC_ACQUIRE)) {
        kept = found;
        __atomic_store_n(&state, 1, __ATOMIC_RELEASE);
    }
    *out = found;
    return true;
}

static uint32_t gnu_hash_of(const char *s)
{
    uint32_t h = 5381;
    for (; *s; s++)
        h = h * 33 + (uint8_t)*s;
    return h;
}

static uint32_t sysv_hash_of(const char *s)
{
    uint32_t h = 0;
    for (; *s; s++) {
        h = (h << 4) + (uint8_t)*s;
        uint32_t g = h & 0xf0000000u;
        if (g)
            h ^= g >> 24;
        h &= ~g;
    }
    return h;
}

/* The index of `name` in the object's dynamic symbol table (0: none), through its hash
 * table as the dynamic linker looks it up: a few entries read, where a walk of the
 * whole table (30,000 symbols, 0.7 MB) faulted in some 230 pages at every start. */
static size_t symbol_index(const struct dynobj *o, const char *name)
{
    if (o->gnu_hash) {
        const uint32_t *g = o->gnu_hash;
        uint32_t nbuckets = g[0], symoffset = g[1], bloom_words = g[2];
        if (!nbuckets)
            return 0;
        const uint32_t *buckets = (const uint32_t *)((const ElfW(Addr) *)(g + 4) + bloom_words);
        const uint32_t *chain = buckets + nbuckets;
        uint32_t h = gnu_hash_of(name);
        uint32_t i = buckets[h % nbuckets];
        if (i < symoffset)
            return 0;
        for (;; i++) {
            uint32_t h2 = chain[i - symoffset];
            if ((h | 1) == (h2 | 1) && strcmp(o->strtab + o->symtab[i].st_name, name) == 0)
                return i;
            if (h2 & 1)
                return 0;
        }
    }
    uint32_t nbucket = o->sysv_hash[0];
    if (!nbucket)
        return 0;
    const uint32_t *bucket = o->sysv_hash + 2, *chain = bucket + nbucket;
    for (uint32_t i = bucket[sysv_hash_of(name) % nbucket]; i; i = chain[i])
        if (strcmp(o->strtab + o->symtab[i].st_name, name) == 0)
            return i;
    return 0;
}

/* libunicorn's PLT slot for `name` (writable), where its own calls to `name` jump
 * through; NULL when libunicorn has none. */
void **plt_slot(const char *name)
{
    if (no_plt())
        return NULL;
    struct dynobj o;
    size_t sym = unicorn_object(&o) && o.jmprel ? symbol_index(&o, name) : 0;
    if (!sym)
        return NULL;
    for (size_t k = 0; k < o.njmprel; k++) {
        if (ELF64_R_SYM(o.jmprel[k].r_info) != sym)
            continue;
        void **slot = (void **)(o.base + o.jmprel[k].r_offset);
        long pg = sysconf(_SC_PAGESIZE);
        void *start = (void *)((uintptr_t)slot & ~(uintptr_t)(pg - 1));
        if (mprotect(start, (size_t)pg, PROT_READ | PROT_WRITE) != 0)
            return NULL;
        return slot;
    }
    return NULL;
}

/* Point libunicorn's PLT slot for `name` at `fn`; false when libunicorn has none. */
bool plt_patch(const char *name, void *fn)
{
    void **slot = plt_slot(name);
    if (!slot)
        return false;
    *slot = fn;
    return true;
}

/* Where libunicorn's function `name` lies, from its symbol's size, checked against
 * `fn`, the address the core was linked to: how a replacement tells which of
 * libunicorn's functions called it (csrfast.c), and how much of a function there is
 * to fingerprint (fpu.c). */
bool code_range_of(const char *name, void *fn, uintptr_t *lo, uintptr_t *hi)
{
    struct dynobj o;
    size_t i = unicorn_object(&o) ? symbol_index(&o, name) : 0;
    if (!i)
        return false;
    const ElfW(Sym) *s = &o.symtab[i];
    if (ELF64_ST_TYPE(s->st_info) != STT_FUNC || s->st_shndx == SHN_UNDEF || !s->st_size ||
        o.base + s->st_value != (uintptr_t)fn)
        return false;
    *lo = (uintptr_t)fn;
    *hi = *lo + s->st_size;
    return true;
}

#else   /* no PLT (a Mach-O libunicorn calls its own functions directly): nothing replaced */
void **plt_slot(const char *name)
{
    return NULL;
}

bool plt_patch(const char *name, void *fn)
{
    return false;
}

bool code_range_of(const char *name, void *fn, uintptr_t *lo, uintptr_t *hi)
{
    return false;
}
#endif
