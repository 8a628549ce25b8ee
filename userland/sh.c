// sh: the shell. Reads a line, splits it into words, and runs the program named by
// the first word (from the initrd) with the rest as arguments, in a child process
// (fork + exec), then reports a non-zero exit status. Built-ins: `exit [status]`.
// The console does not echo input, so the shell echoes what it reads. Ctrl-D on an
// empty line exits.
#include "user.h"

#define MAXLINE 128
#define MAXWORDS 16
#define CTRL_D 4
#define BACKSPACE 8
#define DELETE 127

// Read one line with echo and simple editing. Returns -1 on Ctrl-D at line start.
static int read_line(char *buf, int max) {
  int n = 0;
  for (;;) {
    int c = getchar();
    if (c == CTRL_D && n == 0)
      return -1;
    if (c == '\r')
      c = '\n';
    if (c == BACKSPACE || c == DELETE) {
      if (n > 0) {
        n--;
        printf("\b \b");
      }
      continue;
    }
    if (c < 0 || c == CTRL_D)
      continue;
    printf("%c", c);
    if (c == '\n') {
      buf[n] = 0;
      return n;
    }
    if (n + 1 < max)
      buf[n++] = (char)c;
  }
}

// Split line into words in place; returns the count.
static int split(char *line, char **words) {
  int n = 0;
  for (char *s = line; *s && n < MAXWORDS;) {
    while (*s == ' ' || *s == '\t')
      *s++ = 0;
    if (*s == 0)
      break;
    words[n++] = s;
    while (*s && *s != ' ' && *s != '\t')
      s++;
  }
  words[n] = NULL;
  return n;
}

static void run(char **words) {
  int pid = fork();
  if (pid < 0) {
    printf("sh: fork failed\n");
    return;
  }
  if (pid == 0) {
    exec(words[0], words);
    printf("sh: %s: not found\n", words[0]);
    exit(127);
  }
  int status = 0;
  waitpid(pid, &status);
  if (status != 0)
    printf("sh: %s exited with status %d\n", words[0], status);
}

int main(void) {
  char line[MAXLINE];
  char *words[MAXWORDS + 1];
  for (;;) {
    printf("$ ");
    if (read_line(line, sizeof(line)) < 0) {
      printf("\n");
      return 0;
    }
    if (split(line, words) == 0)
      continue;
    if (strcmp(words[0], "exit") == 0)
      return words[1] ? atoi(words[1]) : 0;
    run(words);
  }
}
