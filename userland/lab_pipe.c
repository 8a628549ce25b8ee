// lab_pipe MODE TOKEN: the pipes lab's test program (labs/pipe). Prints "PASS TOKEN"
// only if every check of MODE held; otherwise a FAIL line saying which.
//
//   basic    a child writes a message with the token into a pipe and exits; the
//            parent reads it whole, then end of file (0)
//   large    64 KiB through the pipe (128 times its buffer): the writer must wait
//            for the reader, and every byte arrives in order
//   eof      end of file only once every write end is closed, dup'd ones included
//   broken   a byte goes through while both ends are open; once no read end is
//            open, a write returns -1
//   writers  four children write 1000 bytes each at once: 4000 bytes arrive, each
//            child's bytes in its own order
#include "user.h"

static int failed(const char *what) {
  printf("FAIL %s\n", what);
  return 1;
}

// Read until end of file into buf (at most max); returns the count or -1.
static long read_all(int fd, char *buf, long max) {
  long got = 0, n;
  while (got < max && (n = read(fd, buf + got, (size_t)(max - got))) > 0)
    got += n;
  return n < 0 ? -1 : got;
}

static int basic(const char *token) {
  int p[2];
  char msg[80], got[80];
  if (pipe(p) < 0)
    return failed("pipe");
  snprintf(msg, sizeof(msg), "through the pipe: %s", token);
  int pid = fork();
  if (pid == 0) {
    close(p[0]);
    long n = (long)strlen(msg);
    exit(write(p[1], msg, (size_t)n) == n ? 0 : 1);
  }
  close(p[1]);
  long n = read_all(p[0], got, sizeof(got) - 1);
  int status = -1;
  waitpid(pid, &status);
  if (status != 0)
    return failed("the writer's write did not return its length");
  if (n != (long)strlen(msg) || memcmp(got, msg, (size_t)n) != 0)
    return failed("the message did not arrive whole");
  if (read(p[0], got, 1) != 0)
    return failed("no end of file after the writer exited");
  close(p[0]);
  return 0;
}

static int large(void) {
  enum { TOTAL = 65536 };
  int p[2];
  static char chunk[1000];
  if (pipe(p) < 0)
    return failed("pipe");
  int pid = fork();
  if (pid == 0) {
    close(p[1]);
    long got = 0, n;
    while ((n = read(p[0], chunk, sizeof(chunk))) > 0) {
      for (long i = 0; i < n; i++)
        if (chunk[i] != (char)((got + i) * 7 % 251))
          exit(2);
      got += n;
    }
    exit(got == TOTAL ? 0 : 3);
  }
  close(p[0]);
  for (long sent = 0; sent < TOTAL;) {
    long n = TOTAL - sent < 700 ? TOTAL - sent : 700;
    for (long i = 0; i < n; i++)
      chunk[i] = (char)((sent + i) * 7 % 251);
    if (write(p[1], chunk, (size_t)n) != n)
      return failed("a write into the pipe was short");
    sent += n;
  }
  close(p[1]);
  int status = -1;
  waitpid(pid, &status);
  return status == 0 ? 0 : failed(status == 2 ? "bytes arrived out of order" :
                                  "the reader did not get all 65536 bytes");
}

static int eof(void) {
  int p[2];
  char c;
  if (pipe(p) < 0)
    return failed("pipe");
  int extra = dup(p[1]);
  if (extra < 0 || write(p[1], "x", 1) != 1)
    return failed("dup or write");
  close(p[1]);
  if (read(p[0], &c, 1) != 1 || c != 'x')
    return failed("the byte written before close");
  int pid = fork();
  if (pid == 0) {  // holds the dup'd write end a while, then closes it by exiting
    sleep_ms(20);
    exit(0);
  }
  close(extra);
  if (read(p[0], &c, 1) != 0)  // blocks until the child's copy is closed too
    return failed("no end of file once every write end was closed");
  waitpid(pid, NULL);
  return 0;
}

static int broken(void) {
  int p[2];
  char c;
  if (pipe(p) < 0)
    return failed("pipe");
  if (write(p[1], "y", 1) != 1 || read(p[0], &c, 1) != 1 || c != 'y')
    return failed("a byte through the pipe while both ends are open");
  close(p[0]);
  if (write(p[1], "x", 1) != -1)
    return failed("a write with no reader did not return -1");
  close(p[1]);
  return 0;
}

static int writers(void) {
  int p[2];
  static char buf[4000];
  if (pipe(p) < 0)
    return failed("pipe");
  for (int w = 0; w < 4; w++)
    if (fork() == 0) {
      close(p[0]);
      char mine[250];
      for (int i = 0; i < 4; i++) {
        for (int k = 0; k < 250; k++)
          mine[k] = (char)('a' + w * 5 + (i * 250 + k) % 5);
        if (write(p[1], mine, sizeof(mine)) != (long)sizeof(mine))
          exit(1);
      }
      exit(0);
    }
  close(p[1]);
  long n = read_all(p[0], buf, sizeof(buf));
  while (wait(NULL) > 0)
    ;
  if (n != 4000)
    return failed("4000 bytes did not arrive");
  int count[4] = {0}, pos[4] = {0};
  for (long i = 0; i < n; i++) {
    int w = (buf[i] - 'a') / 5;
    if (w < 0 || w > 3 || buf[i] != (char)('a' + w * 5 + pos[w]++ % 5))
      return failed("a writer's bytes arrived out of its order");
    count[w]++;
  }
  for (int w = 0; w < 4; w++)
    if (count[w] != 1000)
      return failed("a writer's bytes are missing");
  return 0;
}

int main(int argc, char **argv) {
  if (argc < 3) {
    printf("usage: lab_pipe basic|large|eof|broken|writers TOKEN\n");
    return 2;
  }
  const char *mode = argv[1], *token = argv[2];
  int r = strcmp(mode, "basic") == 0    ? basic(token)
          : strcmp(mode, "large") == 0  ? large()
          : strcmp(mode, "eof") == 0    ? eof()
          : strcmp(mode, "broken") == 0 ? broken()
          : strcmp(mode, "writers") == 0 ? writers()
                                         : failed("unknown mode");
  if (r == 0)
    printf("PASS %s\n", token);
  return r;
}
