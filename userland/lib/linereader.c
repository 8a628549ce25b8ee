// linereader.c: reading a file descriptor a line at a time, for programs like grep
// that want lines but should not make one read() per byte (each read is a trap, and
// for a file a trip through the inode lock).
#include "user.h"

void lr_init(struct linereader *lr, int fd) {
  lr->fd = fd;
  lr->pos = lr->len = 0;
  lr->error = 0;
}

// Refill the buffer once it is used up: 1 if there are bytes, 0 at end of input or
// after an error (lr->error says which).
static int lr_fill(struct linereader *lr) {
  if (lr->pos < lr->len)
    return 1;
  long n = read(lr->fd, lr->buf, sizeof(lr->buf));
  if (n < 0)
    lr->error = 1;
  lr->pos = 0;
  lr->len = n > 0 ? (int)n : 0;
  return lr->len > 0;
}

// The next line into line, NUL-terminated, with its newline. A line of max-1 bytes or
// more comes back in pieces of max-1 bytes, the last of them ending in the newline.
// Returns the length; 0 at end of input (or after a read error).
int lr_getline(struct linereader *lr, char *line, int max) {
  int n = 0;
  while (n + 1 < max && lr_fill(lr)) {
    char c = lr->buf[lr->pos++];
    line[n++] = c;
    if (c == '\n')
      break;
  }
  line[n] = 0;
  return n;
}
