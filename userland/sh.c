// sh: the shell. Reads a line and runs it: a pipeline of one or more commands
// separated by `|`, each a program name and its arguments, with redirections
// `< FILE`, `> FILE` (create or truncate) and `>> FILE` (append) that override the
// pipe for that command. Every command runs in its own child (fork, then exec); the
// shell waits for all of them and reports each non-zero exit status. A name without
// a `/` is a program in `/`, so programs are found whatever the current directory.
// Built-ins: `cd [DIR]` (to `/` without DIR), `exit [status]` and `help` (the
// built-ins, the command syntax and the programs in `/`). The console does not echo
// input, so the shell echoes what it reads. Ctrl-D on an empty line exits.
#include "user.h"

#define MAXLINE 256
#define MAXARGS 16    // words of one command
#define MAXSTAGES 16  // commands in one pipeline
#define HELP_WIDTH 78 // help wraps its list of programs at this column
#define CTRL_D 4
#define BACKSPACE 8
#define DELETE 127

// One command of a pipeline, as parsed.
struct cmd {
  char *argv[MAXARGS + 1];
  int argc;
  char *in;    // < FILE, or NULL
  char *out;   // > FILE or >> FILE, or NULL
  int append;  // out was given with >>
};

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

static int is_blank(char c) { return c == ' ' || c == '\t'; }
static int is_special(char c) { return c == '|' || c == '<' || c == '>'; }

// Split line into tokens in place: words, and the operators "|", "<", ">", ">>" even
// when no blank separates them from a word (`echo hi>f`). A word is not terminated
// where it ends: the blank or operator after it is zeroed on the next round, once
// it has been read. Each operator becomes a pointer to one of the string constants
// below, so the parser can tell it from a word spelled the same. Returns the count,
// or -1 if there are more than max.
static const char OP_PIPE[] = "|", OP_IN[] = "<", OP_OUT[] = ">", OP_APPEND[] = ">>";

static int tokenize(char *line, char **tok, int max) {
  int n = 0;
  for (char *s = line; *s;) {
    if (is_blank(*s)) {
      *s++ = 0;
      continue;
    }
    if (n == max)
      return -1;
    if (*s == '>' && s[1] == '>') {
      tok[n++] = (char *)OP_APPEND;
      *s++ = 0, *s++ = 0;
    } else if (is_special(*s)) {
      tok[n++] = (char *)(*s == '|' ? OP_PIPE : *s == '<' ? OP_IN : OP_OUT);
      *s++ = 0;
    } else {
      tok[n++] = s;
      while (*s && !is_blank(*s) && !is_special(*s))
        s++;
    }
  }
  return n;
}

static int is_operator(const char *t) {
  return t == OP_PIPE || t == OP_IN || t == OP_OUT || t == OP_APPEND;
}

static int syntax_error(const char *why) {
  fprintf(STDERR, "sh: syntax error: %s\n", why);
  return -1;
}

// Group the tokens into the commands of a pipeline, filling cmds: how many, or -1
// after a message (an empty command, a redirection without its file, too many
// words or commands).
static int parse(char **tok, int ntok, struct cmd *cmds) {
  int n = 0;
  struct cmd *c = &cmds[0];
  memset(c, 0, sizeof(*c));
  for (int i = 0; i < ntok; i++) {
    char *t = tok[i];
    if (t == OP_PIPE) {
      if (c->argc == 0)
        return syntax_error("empty command before |");
      if (++n == MAXSTAGES)
        return syntax_error("too many commands");
      c = &cmds[n];
      memset(c, 0, sizeof(*c));
    } else if (is_operator(t)) {
      if (i + 1 == ntok || is_operator(tok[i + 1]))
        return syntax_error("no file after a redirection");
      char *file = tok[++i];
      if (t == OP_IN)
        c->in = file;
      else
        c->out = file, c->append = t == OP_APPEND;
    } else {
      if (c->argc == MAXARGS)
        return syntax_error("too many arguments");
      c->argv[c->argc++] = t;
    }
  }
  if (c->argc == 0)
    return syntax_error(n > 0 ? "empty command after |" : "no command");
  return n + 1;
}

// In a child: make descriptor from into descriptor to, and close from. Closing to
// first makes it the lowest free descriptor, which is the one dup() hands out: 0, 1
// and 2 are always open in the shell, so every lower one is taken.
static void move_fd(int from, int to) {
  if (from == to)
    return;
  close(to);
  if (dup(from) != to) {
    fprintf(STDERR, "sh: cannot set up descriptor %d\n", to);
    exit(1);
  }
  close(from);
}

// In a child: the command's redirections, over what the pipeline gave it.
static void redirect(const struct cmd *c) {
  if (c->in) {
    int fd = open(c->in, O_RDONLY);
    if (fd < 0) {
      fprintf(STDERR, "sh: %s: cannot open\n", c->in);
      exit(1);
    }
    move_fd(fd, STDIN);
  }
  if (c->out) {
    int fd = open(c->out, O_WRONLY | O_CREATE | (c->append ? O_APPEND : O_TRUNC));
    if (fd < 0) {
      fprintf(STDERR, "sh: %s: cannot create\n", c->out);
      exit(1);
    }
    move_fd(fd, STDOUT);
  }
}

// In a child: become the command's program. A name without a '/' is looked up in
// the root directory, where the programs are (without a disk, exec finds "/NAME" in
// the initrd as NAME).
static void exec_cmd(struct cmd *c) {
  char path[MAXPATH];
  const char *prog = c->argv[0];
  if (strchr(prog, '/') == NULL && snprintf(path, sizeof(path), "/%s", prog) < MAXPATH)
    prog = path;
  exec(prog, c->argv);
  fprintf(STDERR, "sh: %s: not found\n", c->argv[0]);
  exit(127);
}

// Start the n commands, each reading the pipe from the one before and writing a pipe
// to the one after, then wait for every one. The shell closes its copy of each pipe
// end once the children have theirs: a reader sees end of file only when every
// write end is closed, the shell's included.
static void run(struct cmd *cmds, int n) {
  int pids[MAXSTAGES], started = 0;
  int in = -1;  // the read end of the pipe from the previous command
  for (int i = 0; i < n; i++) {
    int p[2] = {-1, -1};
    if (i + 1 < n && pipe(p) < 0) {
      fprintf(STDERR, "sh: cannot make a pipe\n");
      break;
    }
    int pid = fork();
    if (pid == 0) {
      if (in >= 0)
        move_fd(in, STDIN);
      if (p[1] >= 0) {
        close(p[0]);
        move_fd(p[1], STDOUT);
      }
      redirect(&cmds[i]);
      exec_cmd(&cmds[i]);
    }
    if (in >= 0)
      close(in);
    if (p[1] >= 0)
      close(p[1]);
    in = p[0];
    if (pid < 0) {
      printf("sh: fork failed\n");
      break;
    }
    pids[started++] = pid;
  }
  if (in >= 0)
    close(in);  // a pipeline cut short: its last reader is not coming
  // Reported once all have exited, so the reports follow everything they printed.
  int status[MAXSTAGES];
  for (int i = 0; i < started; i++) {
    status[i] = 0;
    waitpid(pids[i], &status[i]);
  }
  for (int i = 0; i < started; i++)
    if (status[i] != 0)
      printf("sh: %s exited with status %d\n", cmds[i].argv[0], status[i]);
}

static void cd(struct cmd *c) {
  const char *dir = c->argc > 1 ? c->argv[1] : "/";
  if (chdir(dir) < 0)
    fprintf(STDERR, "sh: cd: %s: no such directory\n", dir);
}

// Whether /NAME is a program: a file that starts with the ELF magic (exec's test).
static int is_program(const char *name) {
  char path[MAXPATH], magic[4];
  if (snprintf(path, sizeof(path), "/%s", name) >= (int)sizeof(path))
    return 0;
  int fd = open(path, O_RDONLY);
  if (fd < 0)
    return 0;
  long n = read(fd, magic, sizeof(magic));
  close(fd);
  return n == (long)sizeof(magic) && memcmp(magic, "\x7f" "ELF", sizeof(magic)) == 0;
}

// The programs a command can name: those in the root directory, where exec_cmd()
// looks, in directory order, wrapped at HELP_WIDTH. Without a file system (no disk)
// exec finds programs in the initrd, which has no directory to list.
static void list_programs(void) {
  static char buf[512];  // whole linux_dirent64 records (abi.h)
  int fd = open("/", O_RDONLY);
  if (fd < 0) {
    printf("programs: those in the initrd, by name (no file system to list them from)\n");
    return;
  }
  printf("programs in /:");
  int col = (int)strlen("programs in /:");
  long n;
  while ((n = getdents64(fd, buf, sizeof(buf))) > 0) {
    for (long off = 0; off < n;) {
      struct linux_dirent64 *d = (struct linux_dirent64 *)(buf + off);
      off += d->d_reclen;
      if (d->d_name[0] == '.' || !is_program(d->d_name))
        continue;
      int len = (int)strlen(d->d_name);
      if (col + 1 + len > HELP_WIDTH) {
        printf("\n ");  // a continuation line starts one column in
        col = 1;
      }
      printf(" %s", d->d_name);
      col += 1 + len;
    }
  }
  printf("\n");
  close(fd);
}

static void help(void) {
  printf("built-ins: cd [DIR], exit [STATUS], help\n");
  printf("a command: PROGRAM [ARGS...] [< FILE] [> FILE | >> FILE]; "
         "cmd | cmd | ... a pipeline\n");
  list_programs();
}

int main(void) {
  static char line[MAXLINE];
  static char *tok[MAXLINE];  // a token takes at least one byte of the line
  static struct cmd cmds[MAXSTAGES];
  for (;;) {
    printf("$ ");
    if (read_line(line, sizeof(line)) < 0) {
      printf("\n");
      return 0;
    }
    int ntok = tokenize(line, tok, MAXLINE), n;
    if (ntok < 0)
      syntax_error("too many words");
    if (ntok <= 0 || (n = parse(tok, ntok, cmds)) < 0)
      continue;
    // Built-ins change the shell itself, so they run here, and only on their own.
    if (n == 1 && strcmp(cmds[0].argv[0], "exit") == 0)
      return cmds[0].argv[1] ? atoi(cmds[0].argv[1]) : 0;
    if (n == 1 && strcmp(cmds[0].argv[0], "cd") == 0) {
      cd(&cmds[0]);
      continue;
    }
    if (n == 1 && strcmp(cmds[0].argv[0], "help") == 0) {
      help();
      continue;
    }
    run(cmds, n);
  }
}
