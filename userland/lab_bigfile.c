// lab_bigfile MODE TOKEN BLOCKS: the large-files lab's test program (labs/bigfile).
// Prints "PASS TOKEN" only if every check of MODE held; otherwise a FAIL line saying
// which, and exits 1.
//
//   write   write a file "big" of BLOCKS blocks (1024 bytes each, block k filled with
//           a pattern of k and the token), read it back and check every byte and
//           fstat's size.
//   unlink  the same, then unlink it: the grader checks the disk afterwards.
//   limit   write until write() gives a short count: a file stops growing at the
//           largest size the kernel maps (or when the disk is full), without an error
//           or a panic, and what was written reads back.
#include "user.h"

#define BLOCK 1024

static char buf[BLOCK], back[BLOCK];

static void pattern(char *b, long k, const char *token) {
  size_t tl = strlen(token);
  for (int i = 0; i < BLOCK; i++)
    b[i] = (char)((k * 131 + i * 7) & 0xff);
  memcpy(b, &k, sizeof(k));
  memcpy(b + sizeof(k), token, tl < 16 ? tl : 16);
}

static int fail(const char *what, long k) {
  printf("FAIL %s (block %ld)\n", what, k);
  return 1;
}

// Write blocks 0..n-1; returns how many were written in full.
static long write_blocks(int fd, long n, const char *token) {
  for (long k = 0; k < n; k++) {
    pattern(buf, k, token);
    if (write(fd, buf, BLOCK) != BLOCK)
      return k;
  }
  return n;
}

static int check_blocks(long n, const char *token) {
  int fd = openat("big", O_RDONLY, 0);
  if (fd < 0)
    return fail("cannot open big again", 0);
  for (long k = 0; k < n; k++) {
    pattern(buf, k, token);
    if (read(fd, back, BLOCK) != BLOCK)
      return fail("short read", k);
    if (memcmp(buf, back, BLOCK) != 0)
      return fail("block reads back different", k);
  }
  if (read(fd, back, 1) != 0)
    return fail("read past the end is not 0", n);
  struct stat st;
  if (fstat(fd, &st) != 0 || st.size != (uint64_t)n * BLOCK)
    return fail("fstat size", n);
  close(fd);
  return 0;
}

int main(int argc, char **argv) {
  if (argc < 4) {
    printf("usage: lab_bigfile write|unlink|limit TOKEN BLOCKS\n");
    return 2;
  }
  const char *mode = argv[1], *token = argv[2];
  long n = atol(argv[3]);
  int fd = openat("big", O_CREATE | O_RDWR | O_TRUNC, 0);
  if (fd < 0)
    return fail("cannot create big", 0);
  long written = write_blocks(fd, n, token);
  close(fd);
  if (strcmp(mode, "limit") == 0) {
    if (written == n)
      return fail("the file never stopped growing", n);
    printf("lab_bigfile: the file stopped at %ld blocks\n", written);
    n = written;
  } else if (written != n) {
    return fail("write returned a short count", written);
  }
  if (check_blocks(n, token))
    return 1;
  if (strcmp(mode, "unlink") == 0 && unlinkat("big", 0) != 0)
    return fail("unlink", 0);
  printf("PASS %s\n", token);
  return 0;
}
