/* outfile.h - how every tool writes an output file (outfile.c; the rule is
 * docs/tools.md, "Output files"): a user's file is never lost.
 *
 *   a regular file, or a new one   written to a temporary file beside it
 *                                  (FILE.XXXXXX), renamed over it only on
 *                                  outfile_commit; outfile_abandon, or a
 *                                  failed write, leaves FILE as it was.  An
 *                                  existing FILE's permission bits are kept.
 *   a symbolic link                the file it points to (the last link of
 *                                  a chain) is the one replaced, beside
 *                                  itself; the link stays a link.
 *   a device, a FIFO, a socket     written directly: never created,
 *                                  truncated, renamed or removed
 *                                  (/dev/null, /dev/stdout, a pipe).
 *   the process's own standard     written through it, after what it
 *   output or error, a file        holds (-o /dev/stdout >out.asm).
 *   a directory                    refused (Is a directory).
 *   one of the run's inputs        refused before anything is written:
 *                                  the same file (device and inode) as one
 *                                  of `inputs`, through whatever name, link
 *                                  or hard link.
 *
 * A temporary file is removed when the process ends by SIGINT, SIGTERM or
 * SIGHUP (whose action was the default).  Thread-safe: each handle belongs
 * to one thread at a time. */
#ifndef TCC_OUTFILE_H
#define TCC_OUTFILE_H

#include <glib.h>
#include <stdio.h>

typedef struct OutFile OutFile;

typedef enum {
  OUTFILE_DEFAULT = 0,
  /* fsync the text before the rename: for results that a long run made
   * (tcc-tune's log, tcc-sweep's results), not for a file a rerun makes
   * again in a second */
  OUTFILE_SYNC = 1 << 0,
} OutFileFlags;

/* The errors: an output that is one of the inputs is OUTFILE_ERROR_INPUT,
 * whose message is that input as given (for the caller's "TOOL: error: -o
 * FILE is the plan itself"); everything else is in G_FILE_ERROR (the code
 * from errno), whose message is the reason alone ("No such file or
 * directory"), for the caller's "FILE: error: cannot write: REASON". */
#define OUTFILE_ERROR (outfile_error_quark())
GQuark outfile_error_quark(void);
enum { OUTFILE_ERROR_INPUT = 1 };

/* Open `path` for writing (see above), refusing it when it is one of the
 * NULL-terminated `inputs` (NULL: none).  NULL with *err on failure;
 * nothing is created then. */
OutFile *outfile_open(const char *path, const char *const *inputs, OutFileFlags flags, GError **err);

/* The stream to write to (do not fclose it).  A writer that goes around
 * stdio may write(2) to fileno() of it instead, as long as it does not
 * also write through the stream. */
FILE *outfile_stream(OutFile *o);

/* The temporary file being written, or NULL when the target is written
 * directly (a device, a FIFO). */
const char *outfile_temp_path(const OutFile *o);

/* Flush and close the text and put it in place (the rename).  FALSE with
 * *err (G_FILE_ERROR, the reason) when a write, the close or the rename
 * failed: then the temporary file is removed and the target is as it was.
 * Frees o either way. */
gboolean outfile_commit(OutFile *o, GError **err);

/* Give up: close, remove the temporary file; the target is untouched (a
 * device or FIFO has what was written).  Frees o; NULL is a no-op. */
void outfile_abandon(OutFile *o);

/* Open, write `len` bytes of `text` (-1: strlen), commit. */
gboolean outfile_write(const char *path, const char *text, gssize len, const char *const *inputs, OutFileFlags flags,
                       GError **err);

/* Whether `path` names the same file as one of `inputs` (both exist, same
 * device and inode); *which gets that input.  For a check before a run
 * that opens its output later. */
gboolean outfile_is_input(const char *path, const char *const *inputs, const char **which);

#endif
