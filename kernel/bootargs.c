// bootargs.c: the kernel command line, from /chosen bootargs in the device tree.
//
// Format (docs/kernel/1-boot.md): whitespace-separated words.
//   quiet          no boot banner (privlab run --user sets it)
//   vmprint        print the first process's page table after loading it (vmprint.c)
//   backtrace      print a backtrace of the boot path (backtrace.c)
//   timer_hz=N     N scheduler ticks per second instead of TIMER_HZ (graders use
//                  short time slices so scheduling tests need fewer instructions)
//   init=PROG ARG...  run PROG with these arguments as the first process, and power
//                  off with its exit status when it exits. Every word after init=PROG
//                  is an argument. Without init=, the first process is "init"
//                  (userland/init.c), which starts the shell.
// Words cannot contain spaces; the harness builds this string (privlab.boot.bootargs).
#include "defs.h"

#define MAXWORDS 40

static char line[BOOTARGS_MAX];
static char *words[MAXWORDS];
static int nwords;
static int init_word = -1;  // index of the init=PROG word, if any

static int is_space(char c) { return c == ' ' || c == '\t' || c == '\n'; }

// Split the command line into words, in place in our own copy.
void bootargs_parse(const char *cmdline) {
  safestrcpy(line, cmdline, sizeof(line));
  for (char *s = line; *s && nwords < MAXWORDS;) {
    while (is_space(*s))
      *s++ = 0;
    if (*s == 0)
      break;
    if (init_word < 0 && strncmp(s, "init=", 5) == 0)
      init_word = nwords;
    words[nwords++] = s;
    while (*s && !is_space(*s))
      s++;
  }
}

// Is `name` one of the words before init=?
int bootargs_flag(const char *name) {
  int end = init_word < 0 ? nwords : init_word;
  for (int i = 0; i < end; i++)
    if (strcmp(words[i], name) == 0)
      return 1;
  return 0;
}

// The decimal value of a `name=N` word before init=, or `otherwise` if there is none.
long bootargs_number(const char *name, long otherwise) {
  int end = init_word < 0 ? nwords : init_word;
  size_t n = strlen(name);
  for (int i = 0; i < end; i++) {
    const char *w = words[i];
    if (strncmp(w, name, n) != 0 || w[n] != '=' || w[n + 1] == 0)
      continue;
    long value = 0;
    for (w += n + 1; *w >= '0' && *w <= '9'; w++)
      value = value * 10 + (*w - '0');
    return *w == 0 ? value : otherwise;
  }
  return otherwise;
}

// argv for the first process: init=PROG and the words after it, or just INIT_PROGRAM.
// Returns 0 if out of memory or an argument does not fit.
struct args *bootargs_init_args(void) {
  struct args *a = args_alloc();
  if (a == 0)
    return 0;
  if (init_word < 0)
    return args_add(a, INIT_PROGRAM) < 0 ? (args_free(a), (struct args *)0) : a;
  for (int i = init_word; i < nwords; i++) {
    const char *w = i == init_word ? words[i] + 5 : words[i];
    if (args_add(a, w) < 0) {
      args_free(a);
      return 0;
    }
  }
  return a;
}

int bootargs_has_init(void) { return init_word >= 0; }
