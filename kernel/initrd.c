// initrd.c: find user programs in the initial RAM disk.
//
// The loader (QEMU -initrd, or privlab) puts the archive in RAM and records its
// range in /chosen (fdt.c). The format is cpio "newc" (see docs/kernel/1-boot.md and
// harness/boot/initrd.py): each entry is a 110-byte ASCII header ("070701" and 13
// eight-digit hex fields), the NUL-terminated name, padding to 4 bytes, the file
// data, padding to 4 bytes. An entry named "TRAILER!!!" ends the archive.
#include "defs.h"

#define NEWC_MAGIC     "070701"
#define NEWC_HDR_SIZE  110
#define NEWC_MODE      1   // field numbers, after the magic
#define NEWC_FILESIZE  6
#define NEWC_NAMESIZE  11  // a newc mode uses Unix's file types, S_IFMT in abi.h
#define ALIGN4(n)      (((n) + 3) & ~(uintptr_t)3)

static uintptr_t initrd_start, initrd_end;

void initrd_init(uintptr_t start, uintptr_t end) {
  initrd_start = start;
  initrd_end = end > start ? end : start;
  if (!bootargs_flag("quiet"))
    printf("initrd: %d programs\n", initrd_count());
}

// Header field n (0 = ino) as a number; -1 if it is not hex.
static long field(const char *hdr, int n) {
  long v = 0;
  for (const char *s = hdr + 6 + 8 * n; s < hdr + 6 + 8 * (n + 1); s++) {
    int d = (*s >= '0' && *s <= '9') ? *s - '0' : (*s >= 'a' && *s <= 'f') ? *s - 'a' + 10
          : (*s >= 'A' && *s <= 'F') ? *s - 'A' + 10 : -1;
    if (d < 0)
      return -1;
    v = v * 16 + d;
  }
  return v;
}

// Step through the archive: fn(name, data, size, arg) for each regular file until
// fn returns nonzero (that value is returned) or the archive ends (0).
typedef int (*entry_fn)(const char *name, const uint8_t *data, size_t size, void *arg);
static int each_file(entry_fn fn, void *arg) {
  uintptr_t at = initrd_start;
  while (at + NEWC_HDR_SIZE <= initrd_end) {
    const char *hdr = (const char *)at;
    long mode = field(hdr, NEWC_MODE), size = field(hdr, NEWC_FILESIZE);
    long namesize = field(hdr, NEWC_NAMESIZE);
    if (memcmp(hdr, NEWC_MAGIC, 6) != 0 || mode < 0 || size < 0 || namesize <= 0)
      return 0;  // not newc, or corrupt: stop quietly
    const char *name = hdr + NEWC_HDR_SIZE;
    uintptr_t data = ALIGN4(at + NEWC_HDR_SIZE + namesize);
    if (data + size > initrd_end || name[namesize - 1] != 0 || strcmp(name, "TRAILER!!!") == 0)
      return 0;
    while (name[0] == '.' && name[1] == '/')
      name += 2;
    int r = (mode & S_IFMT) == S_IFREG ? fn(name, (const uint8_t *)data, size, arg) : 0;
    if (r)
      return r;
    at = ALIGN4(data + size);
  }
  return 0;
}

static int count_one(const char *name, const uint8_t *data, size_t size, void *n) {
  (void)name, (void)data, (void)size;
  ++*(int *)n;
  return 0;
}

int initrd_count(void) {
  int n = 0;
  each_file(count_one, &n);
  return n;
}

struct lookup {
  const char *name;
  const uint8_t *data;
  size_t size;
};

static int match(const char *name, const uint8_t *data, size_t size, void *arg) {
  struct lookup *l = arg;
  if (strcmp(name, l->name) != 0)
    return 0;
  l->data = data;
  l->size = size;
  return 1;
}

// Find the file called name; 0 and its bytes, or -1.
int initrd_find(const char *name, const uint8_t **data, size_t *size) {
  struct lookup l = {name, 0, 0};
  if (!each_file(match, &l))
    return -1;
  *data = l.data;
  *size = l.size;
  return 0;
}
