/* stdout_check.h - every command's standard output checked before it exits
 * (stdout_check.c; docs/tools.md, "Standard output and exit status"): a
 * report that did not reach its file (a full disk, /dev/full, a quota) is
 * an error, as coreutils' close_stdout has it, never a silent exit 0. */
#ifndef TCC_STDOUT_CHECK_H
#define TCC_STDOUT_CHECK_H

#include <glib.h>

/* Called first thing in main(): at exit, standard output is flushed and
 * closed; if anything printed to it was not written (or the close fails),
 * "TOOL: error: cannot write to standard output: REASON" goes to standard
 * error, one line, and the process exits with `code` (the tool's code for
 * an I/O error) instead of its own status.  `tool` must outlive the
 * process (a string literal). */
void stdout_check_at_exit(const char *tool, int code);

/* fputs(text, stdout), remembering the errno of a failed write for the
 * line's REASON: stdio forgets it once it has dropped what it could not
 * write (a text larger than its buffer is written at once, and a later
 * fflush then has nothing left to fail on).  For the large texts; a few
 * lines of printf stay in the buffer, whose flush at exit sees the error. */
void stdout_put(const char *text);

/* The check now, where a tool goes on to say on standard error that its
 * output was written (tcc-census's and tcc-sweep's summaries): flushes
 * standard output (it stays open); FALSE, with the line above printed
 * once, when something printed to it so far was not written. */
gboolean stdout_check_now(void);

/* The line above for output written around stdio, to file descriptor 1
 * (tcc-gen's assembly): errno `e`; the check at exit then prints nothing
 * more and exits with its code. */
void stdout_check_failed(int e);

#endif
