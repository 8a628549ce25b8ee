// grep PATTERN [FILE...]: print the lines of each file (standard input when none is
// named) that contain PATTERN, a plain string, except that a leading ^ anchors it to
// the start of the line and a trailing $ to the end. With several files each line is
// prefixed "FILE:". Exit status 0 if a line matched, else 1 (also when a file could
// not be read).
#include "user.h"

#define MAXLINE 512       // a longer line is matched in pieces of MAXLINE-1 bytes

struct pattern {
  const char *text;  // without the anchors
  size_t len;
  int at_start, at_end;
};

static struct pattern parse(char *p) {
  struct pattern pat = {p, 0, 0, 0};
  if (*pat.text == '^')
    pat.text++, pat.at_start = 1;
  pat.len = strlen(pat.text);
  if (pat.len > 0 && pat.text[pat.len - 1] == '$') {
    p[pat.text - p + pat.len - 1] = 0;  // pat.text points into p: drop the $
    pat.len--, pat.at_end = 1;
  }
  return pat;
}

// Does line (len bytes, its newline removed) match?
static int match(const struct pattern *pat, const char *line, size_t len) {
  if (pat->len > len)
    return 0;
  if (pat->at_start && pat->at_end)
    return len == pat->len && strncmp(line, pat->text, len) == 0;
  if (pat->at_start)
    return strncmp(line, pat->text, pat->len) == 0;
  if (pat->at_end)
    return strncmp(line + len - pat->len, pat->text, pat->len) == 0;
  return strstr(line, pat->text) != NULL;
}

// Write "PREFIX:LINE\n" (or "LINE\n") in one write(), as echo does. printf would
// cut a long line at its 512-byte buffer.
static void put_line(const char *prefix, const char *line) {
  static char out[MAXPATH + 1 + MAXLINE + 1];
  size_t n = 0;
  if (prefix) {
    size_t p = strlen(prefix);
    p = p < MAXPATH ? p : MAXPATH;
    memcpy(out, prefix, p);
    out[p] = ':';
    n = p + 1;
  }
  size_t l = strlen(line);
  memcpy(out + n, line, l);
  n += l;
  out[n++] = '\n';
  write(STDOUT, out, n);
}

// Print the matching lines of fd; how many matched.
static int grep(const struct pattern *pat, int fd, const char *prefix) {
  struct linereader lr;
  char line[MAXLINE];
  int n, matched = 0;
  lr_init(&lr, fd);
  while ((n = lr_getline(&lr, line, sizeof(line))) > 0) {
    int newline = line[n - 1] == '\n';
    line[n - newline] = 0;
    if (!match(pat, line, (size_t)(n - newline)))
      continue;
    matched++;
    put_line(prefix, line);
  }
  if (lr.error)
    fprintf(STDERR, "grep: %s: read error\n", prefix ? prefix : "stdin");
  return matched;
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(STDERR, "usage: grep PATTERN [FILE...]\n");
    return 1;
  }
  struct pattern pat = parse(argv[1]);
  if (argc == 2)
    return grep(&pat, STDIN, NULL) > 0 ? 0 : 1;
  int matched = 0, failed = 0;
  for (int i = 2; i < argc; i++) {
    int fd = open_for_reading("grep", argv[i]);
    if (fd < 0) {
      failed = 1;
      continue;
    }
    matched += grep(&pat, fd, argc > 3 ? argv[i] : NULL);
    close(fd);
  }
  return matched > 0 && !failed ? 0 : 1;
}
