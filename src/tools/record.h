/* record.h - experiment records: `tcc-grade PLAN --record DIR [--note
 * TEXT]` appends one JSON object per run, on one line, to DIR/records.jsonl;
 * `tcc-grade --log DIR` lists them as a table (docs/tools.md "Experiment
 * records").  Every run is kept, failures included, with a status of the
 * result schema (docs/tools.md "Results"):
 *
 *   pass        legal (numerics on every seed, area, power) and not slower
 *   slower      legal, but P1 cycles x D1 cycles above the best earlier
 *               legal record in DIR for the same problems
 *   numerics    a wrong answer on some seed
 *   area        over the area budget
 *   power       over the power budget
 *   refused     the plan did not load or compile (the diagnostic is kept)
 *   error       a program did not run, or another tool failure
 *
 * Records written before the schema (a "class" of "tool-error", problems
 * as `.problem` lines) are still read.
 * The module knows JSON (json-glib) and files, not the simulator: the
 * grader fills a RecRun. */
#ifndef TCC_RECORD_H
#define TCC_RECORD_H

#include <glib.h>
#include <json-glib/json-glib.h>
#include <stdint.h>

#define REC_FILE "records.jsonl"

enum { REC_MAX_SEEDS = 8 };

typedef enum { REC_PASS, REC_SLOWER, REC_NUMERICS, REC_AREA, REC_POWER, REC_REFUSED, REC_ERROR, REC__COUNT } RecClass;
extern const char *const rec_class_name[REC__COUNT];

/* One problem of a graded run. */
typedef struct RecProblem {
  const char *name;            /* "p1", "d1" */
  char *problem;               /* its `.problem` line without the keyword */
  char *program_sha256;        /* of the generated assembly text */
  char *hardware_sha256;       /* of the canonical `.machine` line (tcc-sim's) */
  int64_t cycles, peak_start;  /* the hottest window [peak_start, +POWER_WINDOW) */
  double area_mm2, peak_w;
  double max_abs_err[REC_MAX_SEEDS];
  gboolean numerics_ok[REC_MAX_SEEDS];
  gboolean area_ok, power_ok;
  int64_t bound;               /* the lower bound's cycles (0: not known) */
  const char *binding;         /* which bound binds                     */
} RecProblem;

/* A run of tcc-grade, as the grader saw it. */
typedef struct RecRun {
  char *time;                  /* UTC, ISO-8601 to the second (rec_now) */
  const char *plan;            /* the path as given */
  char *plan_sha256;           /* of the file's bytes; NULL if unreadable */
  const char *grader, *simulator;
  int spec;                    /* machine spec version */
  const uint64_t *seeds;
  int nseeds;                  /* <= REC_MAX_SEEDS */
  gboolean graded;             /* FALSE: a tool error, in `error` */
  gboolean refused;            /* the tool error is the plan's refusal */
  RecProblem prob[2];          /* p1, d1 (when graded) */
  gboolean has_score;          /* legal, on the graded problem dims */
  double score;
  const char *error;           /* the diagnostic of a tool error */
  const char *note;            /* --note, or NULL */
  char *plan_text;             /* the plan file's text, to grade it again
                                  (rec_file_text); NULL: not kept */
} RecRun;

/* "2026-12-01T07:30:00Z", the current time (g_free). */
char *rec_now(void);
/* The text of a plan for its record (g_free), from its `len` bytes: NULL
 * when they are over REC_MAX_PLAN_TEXT bytes or not UTF-8 text (a JSON
 * string holds it byte for byte only then; a NUL byte is not). */
#define REC_MAX_PLAN_TEXT (1 << 20)
char *rec_plan_text_of(const char *bytes, gsize len);
/* rec_plan_text_of a plan file's bytes; NULL also when it cannot be read. */
char *rec_file_text(const char *file);

/* The plan text record n (1-based: its line in DIR/records.jsonl) keeps
 * (g_free).  NULL with "DIR/records.jsonl: error: no record N: ..." or
 * "DIR/records.jsonl:N:1: error: the record keeps no plan text ...", or
 * "DIR/records.jsonl:N:1: error: REASON" when line N is a bad line
 * (rec_load), or rec_load's error.  Records written before the text was
 * kept have none. */
char *rec_plan_text(const char *dir, int n, GError **err);

/* The records of DIR/records.jsonl, oldest first (JsonObject, owned); a
 * missing file is no records when `missing_ok`.  The file is read line by
 * line by length (a NUL byte ends nothing but its line); a bad line (not
 * UTF-8, a NUL byte, not a JSON object with the fields the log and the
 * classification read) is skipped, and `warn` (when not NULL) gets
 * "DIR/records.jsonl:LINE:1: warning: REASON; line skipped\n" for it.
 * FALSE only with "DIR/records.jsonl: error: cannot read: REASON". */
gboolean rec_load(const char *dir, gboolean missing_ok, GPtrArray **records, GString *warn, GError **err);

/* The class of a run given the earlier records; *best: the best earlier
 * legal record for the same problems, or NULL (borrowed from `earlier`). */
RecClass rec_classify(const RecRun *run, const GPtrArray *earlier, JsonObject **best);

/* A problem's result (the result schema's problem object: status,
 * failures, cycles, peak_w, window, area_mm2, bound, problem, hashes and
 * seeds) as the members of the builder's open object; tcc-grade --json
 * writes the same object. */
void rec_problem_members(JsonBuilder *b, const RecProblem *p, const uint64_t *seeds, int nseeds);

/* The record of a run as one line of JSON (no newline). */
char *rec_json(const RecRun *run, RecClass cls, JsonObject *best);

/* Make DIR (and its parents) and check its records, before a run (their
 * bad lines in `warn`, as rec_load): FALSE with "DIR: error: cannot create: REASON" or rec_load's error. */
gboolean rec_prepare(const char *dir, GString *warn, GError **err);

/* Classify the run against DIR's records and append its line (one
 * write(2) with O_APPEND; after a last line without a newline, a
 * newline first).  *cls and *line: its class and line number (bad lines
 * count: it is the line of the file).  Bad lines are skipped silently:
 * rec_prepare reported them. */
gboolean rec_append(const char *dir, const RecRun *run, RecClass *cls, int *line, GError **err);

/* The table of `tcc-grade --log DIR`: time, plan, note, P1 and D1 cycles,
 * each one's peak W, score, status; oldest first, columns aligned. */
char *rec_log(const char *dir, GString *warn, GError **err);

#endif
