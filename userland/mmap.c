// mmap: map anonymous memory, use it, unmap it, and check the errors.
#include "user.h"

#define START 0x10000000UL
#define LEN   (2 * 4096)

int main(void) {
  if (mmap((void *)START, LEN, PROT_READ | PROT_WRITE) != 0) {
    printf("mmap: mapping failed\n");
    return 1;
  }
  volatile uint8_t *p = (uint8_t *)START;
  for (int i = 0; i < LEN; i++)
    p[i] = (uint8_t)i;
  int sum = 0;
  for (int i = 0; i < LEN; i++)
    sum += p[i];
  int bad = 0;
  bad += mmap((void *)START, 4096, PROT_READ) != -1;           // overlaps
  bad += mmap((void *)(START + 1), 4096, PROT_READ) != -1;     // unaligned
  bad += mmap((void *)(START + LEN), 4096, 0) != -1;           // no permission
  bad += mmap((void *)(START + LEN), 4096, 8) != -1;           // unknown bit
  bad += munmap((void *)START, LEN) != 0;
  bad += munmap((void *)START, LEN) != -1;                     // no longer mapped
  printf("mmap: wrote and summed %d bytes (sum %d), %s\n", LEN, sum, bad ? "FAILED" : "ok");
  return bad != 0;
}
