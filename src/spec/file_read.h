/* file_read.h - every input file of every tool is read through one bounded
 * reader (file_read.c): at most `limit` + 1 bytes are ever read, whatever
 * the file is (a regular file, a FIFO, /dev/stdin, /dev/zero), so an input
 * over its limit costs at most the limit in memory and time before it is
 * refused, instead of being read whole first.  Shared by the simulator, the
 * compiler and the research tools, like text_escape.h. */
#ifndef TCC_FILE_READ_H
#define TCC_FILE_READ_H

#include <errno.h>
#include <glib.h>

/* The limits of the inputs that are not plans (plans, census spaces, shape
 * suites: PLAN_MAX_BYTES, 1 MiB, src/frontend/plan.h). */
/* A program's assembly: twice the text of the largest program tcc-gen
 * writes (about 4.2 M instructions of ~120 bytes, docs/plan.md section 5). */
#define TCC_ASM_MAX_BYTES ((gsize)1 << 30)
/* The files the tools write and read back: tcc-grade's records.jsonl,
 * tcc-tune's tune.csv and measures, tcc-sweep's sweep.json and results. */
#define TCC_DATA_MAX_BYTES ((gsize)256 << 20)

/* The errno value of a file over its limit. */
#define FILE_READ_TOO_LARGE EFBIG

/* The whole of FILE, NUL-terminated and followed by `pad` more NUL bytes
 * (the assembler's lexer reads past the end); *len bytes, at most `limit`.
 * NULL with *errnum set on failure: an errno value (ENOENT, EACCES, EISDIR
 * for a directory, ...) or FILE_READ_TOO_LARGE when the file holds more
 * than `limit` bytes: a regular file by its size, before anything is read;
 * anything else after limit + 1 bytes.  Large buffers get the huge-page
 * hint (sim_huge_hint). */
char *file_read(const char *file, gsize limit, gsize pad, gsize *len, int *errnum);

/* The reason of a file_read failure, for "cannot read ...: REASON" or
 * "... is REASON": "larger than the limit of LIMIT bytes" for
 * FILE_READ_TOO_LARGE, else g_strerror(errnum).  g_free it. */
char *file_read_why(int errnum, gsize limit);

#endif
