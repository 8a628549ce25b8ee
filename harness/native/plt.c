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
#include <dlfcn.h>
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
/* libunicorn's PLT slot for `name`, made writable; NULL when it has none. */
static void **find_slot(const ElfW(Addr) base, const ElfW(Dyn) *dyn, const char *name)
{
    const ElfW(Rela) *rela = NULL;
    const ElfW(Sym) *symtab = NULL;
    const char *strtab = NULL;
    size_t relsz = 0;
    for (const ElfW(Dyn) *d = dyn; d->d_tag != DT_NULL; d++) {
        switch (d->d_tag) {
        case DT_JMPREL: rela = (const ElfW(Rela) *)d->d_un.d_ptr; break;
        case DT_PLTRELSZ: relsz = d->d_un.d_val; break;
        case DT_SYMTAB: symtab = (const ElfW(Sym) *)d->d_un.d_ptr; break;
        case DT_STRTAB: strtab = (const char *)d->d_un.d_ptr; break;
        default: break;
        }
    }
    if (!rela || !symtab || !strtab)
        return NULL;
    for (size_t k = 0; k < relsz / sizeof *rela; k++) {
        const ElfW(Sym) *s = &symtab[ELF64_R_SYM(rela[k].r_info)];
        if (strcmp(strtab + s->st_name, name) != 0)
            continue;
        void **slot = (void **)(base + rela[k].r_offset);
        long pg = sysconf(_SC_PAGESIZE);
        void *start = (void *)((uintptr_t)slot & ~(uintptr_t)(pg - 1));
        if (mprotect(start, (size_t)pg, PROT_READ | PROT_WRITE) != 0)
            return NULL;
        return slot;
    }
    return NULL;
}

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

/* libunicorn's PLT slot for `name` (writable), where its own calls to `name` jump
 * through; NULL when libunicorn has none. */
void **plt_slot(const char *name)
{
    static struct find_arg a;
    if (no_plt())
        return NULL;
    a.inside = (uintptr_t)(void *)&uc_open;
    if (!a.dyn && !(dl_iterate_phdr(find_object, &a) && a.dyn))
        return NULL;
    return find_slot(a.base, a.dyn, name);
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

/* The number of symbols in a dynamic symbol table, which its hash table alone knows:
 * DT_HASH's chain count, or past DT_GNU_HASH's highest bucket to the end of its chain. */
static size_t dynsym_count(const ElfW(Dyn) *dyn)
{
    const uint32_t *gnu = NULL, *sysv = NULL;
    for (const ElfW(Dyn) *d = dyn; d->d_tag != DT_NULL; d++) {
        if (d->d_tag == DT_GNU_HASH)
            gnu = (const uint32_t *)d->d_un.d_ptr;
        else if (d->d_tag == DT_HASH)
            sysv = (const uint32_t *)d->d_un.d_ptr;
    }
    if (sysv)
        return sysv[1];
    if (!gnu)
        return 0;
    uint32_t nbuckets = gnu[0], symoffset = gnu[1], bloom_words = gnu[2];
    const uint32_t *buckets = (const uint32_t *)((const ElfW(Addr) *)(gnu + 4) + bloom_words);
    const uint32_t *chain = buckets + nbuckets;
    uint32_t last = 0;
    for (uint32_t b = 0; b < nbuckets; b++)
        if (buckets[b] > last)
            last = buckets[b];
    if (last < symoffset)
        return symoffset;
    while (!(chain[last - symoffset] & 1))
        last++;
    return (size_t)last + 1;
}

struct code_range {
    uintptr_t lo, hi;
};

static int by_lo(const void *a, const void *b)
{
    uintptr_t x = ((const struct code_range *)a)->lo, y = ((const struct code_range *)b)->lo;
    return (x > y) - (x < y);
}

enum { DIGIT_BITS = 11, DIGITS = 1 << DIGIT_BITS };

/* Sort `t` by address. A radix sort on the offset from libunicorn's load address,
 * three 11-bit digits, when every offset fits in 33 bits (libunicorn is 24 MB): glibc's
 * qsort spent 4 ms of each process's first hart on libunicorn's 30,000 functions, a
 * twentieth of a bare run's start-up. */
static void sort_by_lo(struct code_range *t, size_t n, uintptr_t base)
{
    struct code_range *tmp = malloc(n * sizeof *tmp);
    bool fits = tmp != NULL;
    for (size_t i = 0; fits && i < n; i++)
        fits = t[i].lo >= base && (t[i].lo - base) >> (3 * DIGIT_BITS) == 0;
    if (!fits) {
        free(tmp);
        qsort(t, n, sizeof *t, by_lo);
        return;
    }
    size_t count[DIGITS];
    for (unsigned shift = 0; shift < 3 * DIGIT_BITS; shift += DIGIT_BITS) {
        memset(count, 0, sizeof count);
        for (size_t i = 0; i < n; i++)
            count[(t[i].lo - base) >> shift & (DIGITS - 1)]++;
        size_t at = 0;
        for (size_t d = 0; d < DIGITS; d++) {
            size_t c = count[d];
            count[d] = at;
            at += c;
        }
        for (size_t i = 0; i < n; i++)
            tmp[count[(t[i].lo - base) >> shift & (DIGITS - 1)]++] = t[i];
        memcpy(t, tmp, n * sizeof *t);
    }
    free(tmp);
}

/* libunicorn's defined functions sorted by address, read once from its dynamic symbol
 * table: dladdr1 searches every symbol of the object on each call (0.15 ms each on
 * libunicorn, about 80 calls at the first hart). NULL when the table cannot be read. */
static const struct code_range *unicorn_functions(size_t *n)
{
    static struct code_range *table;
    static size_t count;
    static bool tried;
    if (tried) {
        *n = count;
        return table;
    }
    tried = true;
    struct find_arg a = {.inside = (uintptr_t)(void *)&uc_open};
    if (!dl_iterate_phdr(find_object, &a) || !a.dyn)
        return NULL;
    const ElfW(Sym) *symtab = NULL;
    for (const ElfW(Dyn) *d = a.dyn; d->d_tag != DT_NULL; d++)
        if (d->d_tag == DT_SYMTAB)
            symtab = (const ElfW(Sym) *)d->d_un.d_ptr;
    size_t nsyms = dynsym_count(a.dyn);
    if (!symtab || !nsyms || !(table = calloc(nsyms, sizeof *table)))
        return NULL;
    for (size_t i = 0; i < nsyms; i++) {
        const ElfW(Sym) *s = &symtab[i];
        if (ELF64_ST_TYPE(s->st_info) == STT_FUNC && s->st_shndx != SHN_UNDEF && s->st_size) {
            table[count].lo = a.base + s->st_value;
            table[count].hi = table[count].lo + s->st_size;
            count++;
        }
    }
    sort_by_lo(table, count, a.base);
    *n = count;
    return table;
}

/* Where function `fn` of libunicorn lies, from its symbol's size: how a replacement
 * tells which of libunicorn's functions called it (csrfast.c, tlbflush.c). */
bool code_range_of(void *fn, uintptr_t *lo, uintptr_t *hi)
{
    size_t n = 0;
    const struct code_range *t = unicorn_functions(&n);
    if (t) {
        const struct code_range key = {.lo = (uintptr_t)fn};
        const struct code_range *r = bsearch(&key, t, n, sizeof *t, by_lo);
        if (!r)
            return false;
        *lo = r->lo;
        *hi = r->hi;
        return true;
    }
    Dl_info info;
    const ElfW(Sym) *sym = NULL;
    if (!dladdr1(fn, &info, (void **)&sym, RTLD_DL_SYMENT) || !sym || !sym->st_size ||
        info.dli_saddr != fn)
        return false;
    *lo = (uintptr_t)fn;
    *hi = *lo + sym->st_size;
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

bool code_range_of(void *fn, uintptr_t *lo, uintptr_t *hi)
{
    return false;
}
#endif
