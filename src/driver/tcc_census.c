/* tcc_census.c - the tcc-census command: enumerate a hardware space
 * (census_space.h), keep the area-legal points and rank them by their lower
 * bounds (census.h); docs/tools.md, "tcc-census".
 *
 * Exit codes: 0 = written, 2 = bad input (options, the space file) or an
 * I/O error. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "census.h"
#include "outfile.h"
#include "stdout_check.h"
#include "text_escape.h"

/* A bar on stderr, rewritten in place: "[#####     ]  3840/7776". */
static void bar(guint64 done, guint64 total, gpointer data) {
  (void)data;
  enum { WIDTH = 40 };
  int fill = total ? (int)(done * WIDTH / total) : WIDTH;
  char cells[WIDTH + 1];
  memset(cells, '#', (size_t)fill);
  memset(cells + fill, ' ', (size_t)(WIDTH - fill));
  cells[WIDTH] = '\0';
  fprintf(stderr, "\rtcc-census [%s] %" G_GUINT64_FORMAT "/%" G_GUINT64_FORMAT, cells, done, total);
  if (done == total) fputs("\r\033[K", stderr); /* the bar goes when done */
  fflush(stderr);
}

/* The table on standard output, a piece at a time; a failed write stops
 * it (stdout_check_now then says why). */
static gboolean stdout_write(const char *text, gsize len, gpointer data) {
  (void)len; /* census_write's pieces are NUL-terminated */
  (void)data;
  stdout_put(text);
  return !ferror(stdout);
}

/* The -o file being written and the first write error (errno). */
typedef struct Out {
  OutFile *o;
  int e;
} Out;

/* A piece of the table into the -o file, around stdio (outfile.h allows
 * it), so that a failed write keeps its errno. */
static gboolean file_write(const char *text, gsize len, gpointer data) {
  Out *out = data;
  int fd = fileno(outfile_stream(out->o));
  while (!out->e && len > 0) {
    ssize_t w = write(fd, text, len);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) out->e = w < 0 ? errno : ENOSPC;
    else text += w, len -= (gsize)w;
  }
  return !out->e;
}

/* "tcc-census: error: cannot write 'FILE': REASON", or the space refused. */
static void report_output_error(const char *file, const GError *err) {
  g_autofree char *name = text_escape(file); /* one line, whatever the name holds */
  if (g_error_matches(err, OUTFILE_ERROR, OUTFILE_ERROR_INPUT))
    fprintf(stderr, "tcc-census: error: -o %s is the space file itself\n", name);
  else
    fprintf(stderr, "tcc-census: error: cannot write '%s': %s\n", name, err->message);
}

/* -o FILE, written as every output file is (outfile.h): a regular FILE (or
 * a new one) replaced whole through a temporary file beside it, a device
 * or FIFO written through, the space file itself refused; the table
 * streamed row by row (census_write).  Every failure names FILE, the
 * user's path, never the temporary file; FALSE with the line printed. */
static gboolean write_output(const char *file, const char *space, const Census *c, gboolean json) {
  g_autoptr(GError) err = NULL;
  OutFile *o = outfile_open(file, (const char *const[]){space, NULL}, OUTFILE_DEFAULT, &err);
  Out out = {o, 0};
  if (o && !census_write(c, json, file_write, &out)) { /* the target as it was */
    outfile_abandon(o);
    g_set_error_literal(&err, G_FILE_ERROR, g_file_error_from_errno(out.e), g_strerror(out.e));
    o = NULL;
  }
  if (o && outfile_commit(o, &err)) return TRUE;
  report_output_error(file, err);
  return FALSE;
}

int main(int argc, char **argv) {
  stdout_check_at_exit("tcc-census", 2); /* a report that was not written is an error */
  g_autofree char *out = NULL, *format = NULL;
  gboolean version = FALSE, progress = FALSE, no_progress = FALSE;
  GOptionEntry entries[] = {
      {"output", 'o', 0, G_OPTION_ARG_FILENAME, &out, "write the table to FILE (default: standard output)",
       "FILE"},
      {"format", 0, 0, G_OPTION_ARG_STRING, &format, "csv (default) or json", "FORMAT"},
      {"progress", 0, 0, G_OPTION_ARG_NONE, &progress,
       "draw the progress bar on stderr even when it is not a terminal", NULL},
      {"no-progress", 0, 0, G_OPTION_ARG_NONE, &no_progress, "never draw the progress bar", NULL},
      {"version", 0, 0, G_OPTION_ARG_NONE, &version, "print the version", NULL},
      {NULL, 0, 0, 0, NULL, NULL, NULL}};
  g_autoptr(GOptionContext) ctx = g_option_context_new("SPACE.yaml - rank the area-legal points of a hardware space");
  g_option_context_add_main_entries(ctx, entries, NULL);
  g_option_context_set_summary(
      ctx, "Enumerates the cartesian product of the hardware values in SPACE.yaml, keeps\n"
           "the points within 24 mm^2 and gives each its area, static power, D1's RF\n"
           "budget for resident weights and the lower bounds of P1 and D1, sorted by\n"
           "sqrt(P1 bound x D1 bound) (docs/tools.md, \"tcc-census\").  The summary line\n"
           "goes to stdout with -o, else to stderr.  A progress bar is drawn on stderr\n"
           "when it is a terminal.\n"
           "Exit: 0 written, 2 bad input.");
  g_autoptr(GError) err = NULL;
  if (!g_option_context_parse(ctx, &argc, &argv, &err)) {
    fprintf(stderr, "tcc-census: error: %s\n", err->message);
    return 2;
  }
  if (version) {
    printf("%s (census v%d, spec v%d)\n", TCC_CENSUS_VERSION, CENSUS_VERSION, TCC_SPEC_VERSION);
    return 0;
  }
  if (argc != 2) {
    fprintf(stderr, "tcc-census: error: expected one space file (see --help)\n");
    return 2;
  }
  gboolean json = format && strcmp(format, "json") == 0;
  if (format && !json && strcmp(format, "csv") != 0) {
    fprintf(stderr, "tcc-census: error: --format must be csv or json, got '%s'\n", format);
    return 2;
  }
  if (progress && no_progress) {
    fprintf(stderr, "tcc-census: error: --progress and --no-progress together\n");
    return 2;
  }
  /* -o naming the space file is refused before the census (write_output
   * checks again) */
  if (out && strcmp(out, "-") != 0 && outfile_is_input(out, (const char *const[]){argv[1], NULL}, NULL)) {
    g_autoptr(GError) same = g_error_new_literal(OUTFILE_ERROR, OUTFILE_ERROR_INPUT, argv[1]);
    report_output_error(out, same);
    return 2;
  }
  g_autoptr(CensusSpace) space = census_space_load(argv[1], &err);
  if (!space) {
    fprintf(stderr, "%s\n", err->message);
    return 2;
  }
  gboolean draw = !no_progress && (progress || isatty(STDERR_FILENO));
  g_autoptr(Census) c = census_run(space, draw ? bar : NULL, NULL);
  g_autofree char *summary = census_summary(c);
  if (out && strcmp(out, "-") != 0) {
    if (!write_output(out, argv[1], c, json)) return 2;
    printf("%s: %s\n", argv[1], summary);
  } else {
    census_write(c, json, stdout_write, NULL);
    if (!stdout_check_now()) return 2; /* not the summary of a table that was lost */
    fprintf(stderr, "%s: %s\n", argv[1], summary);
  }
  return 0;
}
