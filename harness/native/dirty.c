/*
 * dirty.c: which RAM pages were written since the last look, from the host kernel.
 *
 * Guest stores are plain host stores into the RAM mapping (Unicorn's fast path), so no
 * hook can see them cheaply. Linux (6.7 and later) can: userfaultfd write-protection in
 * asynchronous mode (UFFD_FEATURE_WP_ASYNC) lets the kernel resolve each first write to
 * a protected page by itself, marking it written, and the PAGEMAP_SCAN ioctl on
 * /proc/self/pagemap lists the written pages and protects them again in one call. A
 * snapshot (harness/machine/snapshot.py) then hashes only those pages instead of all
 * of RAM. Where the kernel cannot (older, or userfaultfd not allowed) ram_tracker_new
 * returns NULL and Python hashes every page.
 *
 * The constants and structures are the kernel's UAPI (linux/userfaultfd.h,
 * linux/fs.h), spelled out here because the bundled C library headers predate them.
 */
#if defined(__linux__)   /* elsewhere no tracker: every page counts as written */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/userfaultfd.h>

#ifndef UFFD_FEATURE_WP_ASYNC
#define UFFD_FEATURE_WP_UNPOPULATED (1 << 13)
#define UFFD_FEATURE_WP_ASYNC (1 << 15)
#endif

struct pm_page_region {
    uint64_t start, end, categories;
};

struct pm_scan_args {
    uint64_t size, flags, start, end, walk_end, vec, vec_len, max_pages;
    uint64_t category_inverted, category_mask, category_anyof_mask, return_mask;
};

#define PM_PAGEMAP_SCAN _IOWR('f', 16, struct pm_scan_args)
#define PM_SCAN_WP_MATCHING (1 << 0)
#define PM_SCAN_CHECK_WPASYNC (1 << 1)
#define PM_PAGE_IS_WRITTEN (1 << 1)
/* Regions one scan may return. The kernel copies them out through a buffer it
 * allocates for every call, vec_len entries of 24 bytes (at most 512): kept within a
 * page, it comes from the slab allocator; 1024 made it a 12 KiB allocation from the
 * page allocator at every call, about 7% of a three-hart xv6 run's time. A scan with
 * more written regions than this goes on from where the kernel stopped (walk_end). */
#define REGIONS 128

struct ram_tracker {
    int uffd, pagemap;
    uint64_t base, size;
    struct pm_page_region regions[REGIONS];
};

void ram_tracker_free(struct ram_tracker *t)
{
    if (!t)
        return;
    if (t->uffd >= 0)
        close(t->uffd);
    if (t->pagemap >= 0)
        close(t->pagemap);
    free(t);
}

static int protect_all(struct ram_tracker *t)
{
    struct uffdio_writeprotect wp = {
        .range = {t->base, t->size}, .mode = UFFDIO_WRITEPROTECT_MODE_WP,
    };
    return ioctl(t->uffd, UFFDIO_WRITEPROTECT, &wp);
}

/* Track writes to [host, host + size), page-aligned; NULL if the kernel cannot. */
struct ram_tracker *ram_tracker_new(void *host, uint64_t size)
{
    struct ram_tracker *t = calloc(1, sizeof *t);
    if (!t)
        return NULL;
    t->base = (uint64_t)(uintptr_t)host;
    t->size = size;
    t->pagemap = -1;
    t->uffd = (int)syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK);
    if (t->uffd < 0)
        goto fail;
    struct uffdio_api api = {
        .api = UFFD_API, .features = UFFD_FEATURE_WP_ASYNC | UFFD_FEATURE_WP_UNPOPULATED,
    };
    if (ioctl(t->uffd, UFFDIO_API, &api))
        goto fail;
    struct uffdio_register reg = {.range = {t->base, size}, .mode = UFFDIO_REGISTER_MODE_WP};
    if (ioctl(t->uffd, UFFDIO_REGISTER, &reg) || protect_all(t))
        goto fail;
    t->pagemap = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
    if (t->pagemap < 0)
        goto fail;
    return t;
fail:
    ram_tracker_free(t);
    return NULL;
}

int64_t ram_tracker_scan_range(struct ram_tracker *t, uint64_t lo, uint64_t hi, uint32_t *idx,
                               uint64_t cap);

/* The pages written since the last scan (indices into idx, at most cap of them),
 * protected again; returns how many, or -1 if the kernel failed (then the caller
 * must assume every page was written). */
int64_t ram_tracker_scan(struct ram_tracker *t, uint32_t *idx, uint64_t cap)
{
    return ram_tracker_scan_range(t, 0, t->size, idx, cap);
}

/* The same for the bytes [lo, hi) of RAM only (offsets, page-aligned): the written
 * pages there are listed and protected again, those elsewhere keep their mark. */
int64_t ram_tracker_scan_range(struct ram_tracker *t, uint64_t lo, uint64_t hi, uint32_t *idx,
                               uint64_t cap)
{
    uint64_t n = 0, start = t->base + lo, end = t->base + (hi < t->size ? hi : t->size);
    while (start < end) {
        struct pm_scan_args a = {
            .size = sizeof a, .flags = PM_SCAN_WP_MATCHING | PM_SCAN_CHECK_WPASYNC,
            .start = start, .end = end, .vec = (uint64_t)(uintptr_t)t->regions,
            .vec_len = REGIONS, .category_mask = PM_PAGE_IS_WRITTEN,
            .return_mask = PM_PAGE_IS_WRITTEN,
        };
        long r = ioctl(t->pagemap, PM_PAGEMAP_SCAN, &a);
        if (r < 0)
            return -1;
        for (long i = 0; i < r; i++)
            for (uint64_t p = t->regions[i].start; p < t->regions[i].end; p += 4096)
                if (n < cap)
                    idx[n++] = (uint32_t)((p - t->base) / 4096);
        if (a.walk_end <= start)
            break;
        start = a.walk_end;
    }
    return (int64_t)n;
}

/* Writes of the host's own (restoring a snapshot) need not be tracked page by page:
 * lift the protection from all of RAM, and protect it all again afterwards (which also
 * forgets what was written). Each returns 0 on success. */
int ram_tracker_pause(struct ram_tracker *t)
{
    struct uffdio_writeprotect wp = {.range = {t->base, t->size}, .mode = 0};
    return ioctl(t->uffd, UFFDIO_WRITEPROTECT, &wp);
}

int ram_tracker_resume(struct ram_tracker *t)
{
    return protect_all(t);
}

#else
#include <stddef.h>
#include <stdint.h>

struct ram_tracker;

struct ram_tracker *ram_tracker_new(void *host, uint64_t size)
{
    return NULL;
}

void ram_tracker_free(struct ram_tracker *t) {}

int64_t ram_tracker_scan(struct ram_tracker *t, uint32_t *idx, uint64_t cap)
{
    return -1;
}

int64_t ram_tracker_scan_range(struct ram_tracker *t, uint64_t lo, uint64_t hi, uint32_t *idx,
                               uint64_t cap)
{
    return -1;
}

int ram_tracker_pause(struct ram_tracker *t)
{
    return -1;
}

int ram_tracker_resume(struct ram_tracker *t)
{
    return -1;
}
#endif
