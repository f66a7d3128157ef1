/* sweep.h - tcc-sweep: a plan expanded into variants (the cartesian product
 * of --set lists), one job per variant, one JSON result per job, the
 * results merged into one table (docs/tools.md, "tcc-sweep").
 *
 * A sweep directory DIR holds:
 *   sweep.json          the manifest: template, swept keys, every variant's
 *                       name and settings (written by sweep_expand)
 *   jobs/NAME.yaml      each variant's plan: the template with its keys set
 *                       through libyaml's document API
 *   jobs.txt            one shell command line per job, in manifest order
 *                       (GNU parallel -a, the Slurm array script)
 *   sweep.slurm         with --emit-slurm: the array script
 *   results/NAME.json   each job's result (sweep_run_job)
 *
 * NAME is readable and stable: the swept keys' last components and values,
 * then 8 hex digits of the SHA-256 of the variant's plan text (without the
 * header comment, which names the template as given), so that the
 * same template and settings give the same name and a changed template a
 * new one (its old results are not taken for the new plan). */
#ifndef TCC_SWEEP_H
#define TCC_SWEEP_H

#include <glib.h>

#define SWEEP_MAX_VARIANTS 100000
#define TCC_SWEEP_VERSION "tcc-sweep 0.1.0"

/* Errors: USAGE and IO messages need a "tcc-sweep: error: " prefix; PLACED
 * ones already read "file:line:col: error: ..." or "file: error: ...", as
 * do the plan loader's (PLAN_ERROR). */
#define SWEEP_ERROR (sweep_error_quark())
GQuark sweep_error_quark(void);
enum { SWEEP_ERROR_USAGE = 1, SWEEP_ERROR_IO, SWEEP_ERROR_PLACED };

/* One --set KEY.PATH=V1,V2,...: a plan path (hardware.sms, d1.panels.w1)
 * and its values, as written. */
typedef struct SweepSet {
  char *path;
  GPtrArray *values; /* char* */
} SweepSet;

/* Parse "KEY.PATH=V1,V2,..." (FALSE with *err: "--set ARG: why"). */
SweepSet *sweep_set_parse(const char *arg, GError **err);
void sweep_set_free(SweepSet *s);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(SweepSet, sweep_set_free)

typedef struct SweepVariant {
  char *name;
  GPtrArray *values; /* char*, one per set, in --set order */
} SweepVariant;

typedef struct Sweep {
  char *dir;          /* absolute */
  char *template_path;
  GPtrArray *keys;    /* char*: the swept paths, in --set order */
  GPtrArray *variants;/* SweepVariant*, the first key varying slowest */
  char *problem;      /* "p1" or "d1": each job grades that one alone   */
                      /* (tcc-grade --problem); NULL: both             */
} Sweep;

void sweep_free(Sweep *s);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(Sweep, sweep_free)

/* Expand `template` (a valid plan) over `sets` into DIR (created): every
 * variant's plan (each must load as a plan: else *err is its loader's
 * one-line error, against DIR/jobs/NAME.yaml), jobs.txt with the command
 * `sweep_cmd` (the absolute tcc-sweep and, when not NULL, --grade GRADE)
 * and the manifest, which keeps `problem` (NULL: both problems).  NULL with *err on bad input or an I/O error. */
Sweep *sweep_expand(const char *template_path, GPtrArray *sets, const char *dir,
                    const char *sweep_cmd, const char *grade, const char *problem, GError **err);
/* The manifest of an expanded DIR. */
Sweep *sweep_load(const char *dir, GError **err);

typedef enum { SWEEP_RAN, SWEEP_SKIPPED } SweepJobState;
/* Run job NAME of DIR: skip it when DIR/results/NAME.json exists, else
 * grade DIR/jobs/NAME.yaml with `grade --json` (tcc-grade) and write the
 * result (atomically); *status (when not NULL) is then the result's status,
 * "pass", "fail" or "error".  FALSE only when the result cannot be written
 * or NAME is not a job of DIR; a failing grade is a result. */
gboolean sweep_run_job(const Sweep *s, const char *name, const char *grade, SweepJobState *state,
                       const char **status, GError **err);
/* Run every job on `threads` threads (GThreadPool); counts of jobs run and
 * skipped; `progress` is called (from one thread at a time) after each. */
typedef void (*SweepProgress)(guint done, guint total, gpointer data);
gboolean sweep_run_all(const Sweep *s, const char *grade, int threads, SweepProgress progress,
                       gpointer data, guint *ran, guint *skipped, GError **err);

/* Write DIR/sweep.slurm, an array script (#SBATCH --array=0-N-1) whose task
 * runs line SLURM_ARRAY_TASK_ID + 1 of jobs.txt. */
gboolean sweep_write_slurm(const Sweep *s, GError **err);

/* The results as one table: a row per variant in manifest order, the swept
 * keys then the metrics (docs/tools.md).  *bad counts the variants without
 * a passing result (missing, failing or in error). */
/* --collect on a tcc-tune directory (one with tune.csv and no sweep.json):
 * its points, the CSV as tcc-tune wrote it or, with `json`, as
 * {"tool": "tcc-tune", "rows": [...]} with the counters and metrics as
 * numbers, the knob values and the status as strings, an empty field as
 * null.  *rows and *passing count the points.  NULL with *err when DIR
 * has no tune.csv or it cannot be read. */
char *sweep_collect_tune(const char *dir, gboolean json, guint *rows, guint *passing, GError **err);
char *sweep_collect(const Sweep *s, gboolean json, guint *bad, GError **err);

/* A result's status in the result schema (docs/tools.md, "Results"):
 * pass, numerics, area, power, refused or error, as a static string; NULL
 * for anything else (or NULL). */
const char *sweep_status_known(const char *status);

#endif
