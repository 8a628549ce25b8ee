// wc [FILE...]: count lines (newlines), words (runs of non-space) and bytes of each
// file, or of standard input when none is named, printed as "LINES WORDS BYTES NAME"
// (no name for standard input), then a total line when there were several files.
// A file that cannot be read is reported and skipped; the exit status is then 1.
#include "user.h"

struct counts {
  long lines, words, bytes;
};

static int is_space(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

// Add fd's counts to *c: 0, or -1 on a read error.
static int count(int fd, struct counts *c) {
  char buf[512];
  long n;
  int in_word = 0;
  while ((n = read(fd, buf, sizeof(buf))) > 0) {
    c->bytes += n;
    for (long i = 0; i < n; i++) {
      if (buf[i] == '\n')
        c->lines++;
      if (is_space(buf[i]))
        in_word = 0;
      else if (!in_word)
        in_word = 1, c->words++;
    }
  }
  return n < 0 ? -1 : 0;
}

static void report(const struct counts *c, const char *name) {
  printf("%ld %ld %ld%s%s\n", c->lines, c->words, c->bytes, name ? " " : "", name ? name : "");
}

int main(int argc, char **argv) {
  struct counts total = {0, 0, 0};
  if (argc < 2) {
    if (count(STDIN, &total) < 0) {
      fprintf(STDERR, "wc: read error\n");
      return 1;
    }
    report(&total, NULL);
    return 0;
  }
  int status = 0;
  for (int i = 1; i < argc; i++) {
    struct counts c = {0, 0, 0};
    int fd = open_for_reading("wc", argv[i]);
    if (fd < 0) {
      status = 1;
      continue;
    }
    if (count(fd, &c) < 0) {
      fprintf(STDERR, "wc: %s: read error\n", argv[i]);
      status = 1;
    }
    close(fd);
    report(&c, argv[i]);
    total.lines += c.lines, total.words += c.words, total.bytes += c.bytes;
  }
  if (argc > 2)
    report(&total, "total");
  return status;
}
