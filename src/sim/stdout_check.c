/* stdout_check.c - standard output checked at exit (stdout_check.h).
 *
 * stdio buffers a report until exit when standard output is a file or a
 * pipe, so a write error (ENOSPC on a full disk or /dev/full, EIO, EFBIG)
 * surfaces only when the buffer is flushed: at exit(), after main's return
 * value is chosen, where nobody looked.  The check runs as an atexit
 * handler, so that every way out of main (--version, a usage error after
 * a partial report, GOption's --help, which calls exit itself) is covered
 * by one call; on failure it ends the process with _exit(code): later
 * handlers are skipped, which only matters on that error path. */
#include "stdout_check.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static const char *check_tool; /* NULL: stdout_check_at_exit not called */
static int check_code;
static gboolean check_failed; /* the line has been printed */
static int put_errno;         /* of the first failed stdout_put (0: none) */

static void report(int e) {
  if (check_failed) return;
  check_failed = TRUE;
  /* errno 0: the error flag of an earlier write, whose errno stdio lost */
  if (!e) e = put_errno;
  fprintf(stderr, "%s: error: cannot write to standard output%s%s\n", check_tool ? check_tool : "tcc",
          e ? ": " : "", e ? g_strerror(e) : "");
  fflush(stderr);
}

void stdout_put(const char *text) {
  errno = 0;
  if (fputs(text, stdout) == EOF && !put_errno) put_errno = errno;
}

gboolean stdout_check_now(void) {
  errno = 0;
  if (fflush(stdout) != 0 || ferror(stdout)) {
    report(errno);
    return FALSE;
  }
  return !check_failed;
}

void stdout_check_failed(int e) { report(e); }

static void at_exit(void) {
  gboolean ok = stdout_check_now();
  errno = 0;
  if (fclose(stdout) != 0 && ok) { /* e.g. NFS reports a write error at close */
    report(errno);
    ok = FALSE;
  }
  if (!ok) _exit(check_code);
}

void stdout_check_at_exit(const char *tool, int code) {
  if (check_tool) return;
  check_tool = tool;
  check_code = code;
  atexit(at_exit);
}
