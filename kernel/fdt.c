// fdt.c: read what the kernel needs from the flattened device tree (DTB).
//
// The boot protocol gives us its physical address in a1. The format (Devicetree
// Specification v0.4, chapter 5): a header, a structure block of big-endian 32-bit
// tokens (BEGIN_NODE name, PROP len nameoff value, END_NODE, NOP, END) and a strings
// block holding property names. We walk the tokens once, tracking the path depth, and
// keep: /memory reg, /cpus timebase-frequency and how many /cpus/cpu@N nodes there
// are (the harts), /chosen bootargs and
// linux,initrd-start/-end. The harness builds the same kind of tree (harness/boot/dtb.py).
#include "defs.h"

#define FDT_MAGIC      0xd00dfeed
#define FDT_BEGIN_NODE 1
#define FDT_END_NODE   2
#define FDT_PROP       3
#define FDT_NOP        4
#define FDT_END        9
#define ALIGN4(n)      (((n) + 3) & ~(uint32_t)3)  // tokens are 4-byte aligned

struct fdt_header {  // all fields big-endian
  uint32_t magic, totalsize, off_dt_struct, off_dt_strings, off_mem_rsvmap;
  uint32_t version, last_comp_version, boot_cpuid_phys, size_dt_strings, size_dt_struct;
};

static uint32_t be32(const void *p) {
  const uint8_t *b = p;
  return ((uint32_t)b[0] << 24) | ((uint32_t)b[1] << 16) | ((uint32_t)b[2] << 8) | b[3];
}

// A property value of 1 or 2 cells (4 or 8 bytes) as a number.
static uint64_t cells(const uint8_t *v, uint32_t len) {
  return len == 8 ? ((uint64_t)be32(v) << 32) | be32(v + 4) : be32(v);
}

// Which top-level node the walk is in; properties are matched by (node, name).
enum node { OTHER, ROOT, MEMORY, CPUS, CHOSEN };

static enum node classify(int depth, const char *name) {
  if (depth == 0) return ROOT;
  if (depth != 1) return OTHER;
  if (strncmp(name, "memory", 6) == 0 && (name[6] == 0 || name[6] == '@')) return MEMORY;
  if (strcmp(name, "cpus") == 0) return CPUS;
  if (strcmp(name, "chosen") == 0) return CHOSEN;
  return OTHER;
}

static void property(enum node node, const char *name, const uint8_t *v, uint32_t len,
                     struct bootinfo *info, uint32_t *addr_cells, uint32_t *size_cells) {
  if (node == ROOT && strcmp(name, "#address-cells") == 0) *addr_cells = be32(v);
  if (node == ROOT && strcmp(name, "#size-cells") == 0) *size_cells = be32(v);
  if (node == MEMORY && strcmp(name, "reg") == 0 && len >= 4 * (*addr_cells + *size_cells)) {
    info->ram_base = cells(v, 4 * *addr_cells);
    info->ram_size = cells(v + 4 * *addr_cells, 4 * *size_cells);
  }
  if (node == CPUS && strcmp(name, "timebase-frequency") == 0) info->timebase_hz = cells(v, len);
  if (node == CHOSEN && strcmp(name, "bootargs") == 0) safestrcpy(info->bootargs, (const char *)v,
                                                                   sizeof(info->bootargs));
  if (node == CHOSEN && strcmp(name, "linux,initrd-start") == 0) info->initrd_start = cells(v, len);
  if (node == CHOSEN && strcmp(name, "linux,initrd-end") == 0) info->initrd_end = cells(v, len);
}

// Fill *info from the tree at dtb. Returns 0, or -1 if it is not a device tree.
int fdt_parse(uintptr_t dtb, struct bootinfo *info) {
  const struct fdt_header *h = (const struct fdt_header *)dtb;
  if (dtb == 0 || be32(&h->magic) != FDT_MAGIC)
    return -1;
  const uint8_t *p = (const uint8_t *)dtb + be32(&h->off_dt_struct);
  const char *strings = (const char *)dtb + be32(&h->off_dt_strings);
  uint32_t addr_cells = 2, size_cells = 1;  // the spec's defaults
  enum node stack[8] = {OTHER};
  int depth = -1;
  info->dtb = dtb;
  info->dtb_size = be32(&h->totalsize);
  for (;;) {
    uint32_t token = be32(p);
    p += 4;
    if (token == FDT_BEGIN_NODE) {
      const char *name = (const char *)p;
      depth++;
      if (depth < 8)
        stack[depth] = classify(depth, name);
      if (depth == 2 && stack[1] == CPUS && strncmp(name, "cpu@", 4) == 0)
        info->ncpu++;  // one hart (QEMU's and privlab's trees: cpu@0 .. cpu@N-1)
      p += ALIGN4(strlen(name) + 1);
    } else if (token == FDT_END_NODE) {
      depth--;
    } else if (token == FDT_PROP) {
      uint32_t len = be32(p), nameoff = be32(p + 4);
      if (depth >= 0 && depth < 8)
        property(stack[depth], strings + nameoff, p + 8, len, info, &addr_cells, &size_cells);
      p += 8 + ALIGN4(len);
    } else if (token == FDT_END) {
      break;
    } else if (token != FDT_NOP) {
      return -1;  // corrupt structure block
    }
  }
  if (info->ncpu == 0)
    info->ncpu = 1;  // a tree without cpu nodes: the boot hart at least
  return info->ram_size != 0 && info->timebase_hz != 0 ? 0 : -1;
}
