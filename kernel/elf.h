// elf.h: the parts of the ELF format exec.c reads (System V ABI), for the native XLEN.
#ifndef ELF_H
#define ELF_H

#include "types.h"

#define ELF_MAGIC   0x464C457F  // "\x7FELF" as a little-endian word
#define ELFCLASS32  1
#define ELFCLASS64  2
#define ELFDATA2LSB 1
#define ET_EXEC     2
#define EM_RISCV    243
#define PT_LOAD     1
#define PF_X        1
#define PF_W        2
#define PF_R        4

#if __riscv_xlen == 64
#define ELFCLASS ELFCLASS64
#else
#define ELFCLASS ELFCLASS32
#endif

struct elfhdr {
  uint32_t magic;
  uint8_t class, data, version, osabi, abiversion, pad[7];
  uint16_t type, machine;
  uint32_t version2;
  uintptr_t entry, phoff, shoff;  // Elf64_Addr/Off or Elf32_Addr/Off
  uint32_t flags;
  uint16_t ehsize, phentsize, phnum, shentsize, shnum, shstrndx;
};

struct proghdr {
#if __riscv_xlen == 64
  uint32_t type, flags;
  uint64_t off, vaddr, paddr, filesz, memsz, align;
#else
  uint32_t type, off, vaddr, paddr, filesz, memsz, flags, align;
#endif
};

#endif // ELF_H
