/* tune.h - tcc-tune: a seeded local search over a plan's knobs for one
 * problem's cycles, or both problems' score, within the power and area
 * limits (docs/tools.md, "tcc-tune").
 *
 * The search is a (1 + K) evolution strategy on the knobs' value indices:
 * each round draws K candidates around the best point so far, each moving
 * 1 to 3 knobs by at most their step, evaluates them (compile, then
 * simulate the timing only: timing, power and area do not depend on the
 * data) and keeps the best of them when it beats the best so far; a round
 * without a better point halves every step (never below 1).
 *
 * A draw is a technique move: a knob moved off its default brings in the
 * knobs it needs (the schema's "has no effect unless" rules, plan_needs),
 * a knob moved so that another no longer has effect sends that one back
 * to its default, and a technique switched on brings its companions (the
 * schema's plan_companions, their values derived from the shape and
 * machine: residency takes every SM, K shards and A chunks that fit a
 * WG's RF, multicast); the knobs so set are the point's repairs.  Every random
 * draw is made on the calling thread, in a fixed order, from SplitMix64
 * seeded with --seed (not GLib's generator, whose output depends on
 * G_RANDOM_VERSION), and the points are compared in candidate order: the
 * same template, knobs and options give the same points, log and best
 * plan, whatever the number of threads.  The search ends after its rounds,
 * its evaluation budget, or when 64 draws for each candidate of a round
 * give only points already measured (the neighbourhood within the steps
 * is then, in practice, exhausted); Tune.stopped says which. */
#ifndef TCC_TUNE_H
#define TCC_TUNE_H

#include <glib.h>
#include <stdint.h>

#include "workload.h"

#define TUNE_ERROR (tune_error_quark())
GQuark tune_error_quark(void);
/* USAGE messages need the "tcc-tune: error: " prefix; PLACED ones read
 * "file:line:col: error: ..." (the plan loader's, the compiler's). */
enum { TUNE_ERROR_USAGE = 1, TUNE_ERROR_IO, TUNE_ERROR_PLACED };

#define TUNE_MAX_VALUES 1000000 /* values of one knob                */
/* --knob options at most: a bound on the command line, far above the
 * space a plan's schema gives (122 knobs for both problems of
 * plans/baseline.yaml, with the hardware's). */
#define TUNE_MAX_KNOBS 1024

/* One --knob: a plan path and its ordered values, either the integers
 * lo..hi or a list of plain scalars. */
typedef struct TuneKnob {
  char *path;
  gboolean range;
  int64_t lo, hi;       /* range: the values lo..hi                     */
  GPtrArray *values;    /* list: char*, as written                      */
} TuneKnob;

/* Parse "KEY.PATH=LO..HI" or "KEY.PATH=V1,V2,..." (at least two values). */
TuneKnob *tune_knob_parse(const char *arg, GError **err);
void tune_knob_free(TuneKnob *k);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(TuneKnob, tune_knob_free)
guint tune_knob_count(const TuneKnob *k);
char *tune_knob_value(const TuneKnob *k, guint i); /* the i-th value's text */

/* What a search lowers: one problem's cycles, or both problems' P1 x D1
 * (the score's denominator: the score goes up). */
typedef enum { TUNE_TARGET_D1 = PROB_D1, TUNE_TARGET_P1 = PROB_P1, TUNE_TARGET_BOTH } TuneTarget;
extern const char *const tune_target_name[]; /* "d1", "p1", "both" */

/* What one point measured: within the limits, over power or area (after
 * the fitting), the simulator's error, tcc-gen's refusal (the plan does
 * not load or compile), or a program whose numerics failed on a grade
 * seed (tune_verify_best). */
typedef enum { TUNE_PASS, TUNE_POWER, TUNE_AREA, TUNE_ERROR_POINT, TUNE_REFUSED, TUNE_WRONG, TUNE_SLOWER } TuneStatus;
/* "pass", "power", "area", "error", "refused", "numerics", "slower": no
 * program of the point under the limit beats the best so far (the fitting
 * stopped at its cycles: fit_pipeline_capped) */
extern const char *const tune_status_name[];
typedef struct TuneMeasure {
  TuneStatus status;
  int64_t cycles;        /* the problem's (TUNE_TARGET_BOTH: P1's); 0   */
                         /* for an error                                */
  int64_t d1_cycles;     /* TUNE_TARGET_BOTH: D1's; 0 otherwise          */
  double peak_w, area_mm2; /* both problems: the higher peak            */
  char *error;           /* TUNE_ERROR_POINT: the one-line message      */
  double w[2];           /* each problem's peak, P1's then D1's (0: not  */
                         /* measured)                                   */
} TuneMeasure;

/* How points are measured: `prepare` runs on the calling thread, in
 * candidate order, and returns the work that `finish` completes on a worker
 * thread, or NULL when it has filled *m itself (a plan that does not load
 * or compile).  `data` is passed to prepare. */
typedef struct TuneEval {
  /* `cap` > 0: the objective of the best point so far (cycles, or P1 x D1
   * for both), which a point must beat to matter: an evaluator may stop at
   * it and say TUNE_SLOWER */
  gpointer (*prepare)(const char *file, const char *text, TuneTarget target, double cap, gpointer data,
                      TuneMeasure *m);
  void (*finish)(gpointer work, TuneMeasure *m);
  gpointer data;
} TuneEval;
/* The default: the plan loaded from its text and compiled (the calling
 * thread: GLPK's placement keeps its state per thread), then assembled
 * and simulated for its timing, power and area only (a worker). */
extern const TuneEval tune_eval_compile;

/* Where a round's points are compiled and simulated: here on --jobs
 * threads, or as jobs (jobs.h): each point's plan a file of the round's
 * directory, each job `tcc-tune --eval-job` of it, run by GNU parallel
 * (here or on --sshlogin machines that share the directory) or as a Slurm
 * array; the same measures as here, so the same search. */
typedef enum { TUNE_ENGINE_THREADS, TUNE_ENGINE_PARALLEL, TUNE_ENGINE_SLURM } TuneEngine;

typedef struct TuneOptions {
  TuneTarget target;
  int rounds;            /* 0..10000 (0: the start point only)          */
  int candidates;        /* K, 1..1000                                  */
  guint32 seed;
  int jobs;              /* worker threads, 1..256                      */
  double step;           /* first step, as a fraction of each knob's    */
                         /* values, (0, 1]                               */
  gboolean screen;       /* round 1 screens the techniques: from the    */
                         /* start, every value of every technique of at */
                         /* most 8 values, one knob at a time (no draw), */
                         /* the bundles first; then its winners added   */
                         /* to the best one a round while they pay;    */
                         /* from a new best, again (3 screens at most) */
  gboolean restarts;     /* converged (two rounds without a better point */
                         /* at steps of 1, or every point within them  */
                         /* measured): restart r draws around the best  */
                         /* with the first steps times 2^r             */
  int max_evals;         /* points measured at most, the start included */
                         /* (0: no budget)                              */
  TuneEval eval;         /* tune_options_default: tune_eval_compile     */
  TuneEngine engine;
  const char *sshlogin;  /* PARALLEL: parallel's --sshlogin, or NULL    */
  const char *self;      /* PARALLEL, SLURM: the tcc-tune the jobs run  */
  const char *workdir;   /* PARALLEL, SLURM: the rounds' jobs go to     */
                         /* WORKDIR/rounds/R (absolute)                 */
} TuneOptions;
void tune_options_default(TuneOptions *o); /* p1, 20 rounds, 8, seed 1, 2 jobs, 0.125 */

/* Does measure a beat measure b: a passing point beats one over a limit,
 * which beats an error, a refusal or failed numerics; passing points by
 * cycles (TUNE_TARGET_BOTH: by P1 x D1), points over a limit by how far
 * over (relative), then cycles. */
gboolean tune_better(const TuneMeasure *a, const TuneMeasure *b);

typedef struct TunePoint {
  int round, candidate;  /* round 0 candidate 0: the start              */
  guint *idx;            /* one value index per knob                    */
  int repairs;           /* knobs the draw's technique moves set        */
  TuneMeasure m;
  gboolean best;         /* it became the best point when measured      */
} TunePoint;

typedef struct Tune {
  char *template_path;
  char *text;            /* the template's text                         */
  gsize len;
  GPtrArray *knobs;      /* TuneKnob*, owned                            */
  TuneOptions opt;
  GPtrArray *points;     /* TunePoint*, in measuring order               */
  int best;              /* index into points                           */
  int rounds_run;
  gboolean derived;      /* the knobs are the schema's (no --knob)      */
  int *def;              /* per knob: its default's value index, or -1  */
  GArray **num;          /* per knob: long per value, the number it     */
                         /* compares as (plan_value_number), or         */
                         /* G_MINLONG                                   */
  GArray *rules;         /* TuneRule: "has no effect unless" in the space */
  GArray *companions;    /* TuneCompanion: a technique's companion knobs, */
                         /* their values at the template's shape and     */
                         /* machine (plan_space_companion)               */
  const char *stopped;   /* why the search ended (tune_run)             */
  gboolean verified;     /* tune_verify_best checked t->best            */
  GHashTable *cache;     /* tune_resume: a point's value indices ("3,0,..") */
                         /* -> its TuneMeasure, measured before           */
  int resumed;           /* points tune_run took from the cache          */
  int restarts;          /* restarts tune_run made                       */
} Tune;

/* Read the template and find each knob's starting value: the template's,
 * written or default, which must be one of the knob's values.  Takes the
 * knobs (also on failure).  No knobs: the space is derived from the plan
 * schema (plan_space): every knob of the target's problems that a search
 * may move, with hardware for TUNE_TARGET_BOTH. */
Tune *tune_new(const char *template_path, GPtrArray *knobs, const TuneOptions *opt, GError **err);
void tune_free(Tune *t);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(Tune, tune_free)

/* Called after the start (round 0) and after each round, on the calling
 * thread; FALSE ends the search there (tune_run then returns TRUE). */
typedef gboolean (*TuneProgress)(const Tune *t, int round, gpointer data);
/* Measure the start, then run the rounds.  FALSE with *err when the start
 * point is not a plan that compiles (its message), or on an I/O error. */
gboolean tune_run(Tune *t, TuneProgress progress, gpointer data, GError **err);

/* One job of an engine: the plan `job` measured as tune_eval_compile
 * measures it (its messages named `name`), the measure written to the
 * job's path with .measure for .yaml (through a temporary file); `cap` as
 * TuneEval's.  FALSE
 * with *err only when it cannot be read or written. */
gboolean tune_eval_job(const char *job, const char *name, TuneTarget target, double cap, GError **err);

/* Before tune_run: the points of an earlier search's log (tune_log_csv's
 * text, `file` for messages) are measured already: tune_run takes their
 * measures instead of compiling them again.  Run with the same template,
 * knobs and options (and a larger budget), the search draws the same
 * points and goes on where the log ends: the same log and best plan as a
 * search that was never stopped.  FALSE with "file:line:1: error: ..." for
 * a log that is not this search's (other knobs, a value not among a
 * knob's, a malformed row). */
gboolean tune_resume(Tune *t, const char *file, const char *text, GError **err);

/* After tune_run: the best passing point, checked with the numerics on
 * the grade seeds (WL_GRADE_SEEDS) for the target's problems; a point that
 * fails them becomes TUNE_WRONG and the next best is checked, at most
 * `tries` of them.  TRUE when the best point (t->best) is checked; FALSE
 * with *err on an I/O error or when no point passes. */
gboolean tune_verify_best(Tune *t, int tries, GError **err);

/* The counts of the points' statuses and repaired points. */
typedef struct TuneCounts {
  int status[TUNE_SLOWER + 1];
  int repaired;
} TuneCounts;
void tune_counts(const Tune *t, TuneCounts *c);

/* Every point as CSV: round, candidate, the knobs, status, the result
 * schema's columns (p1_status, p1_cycles, p1_peak_w, d1_status, d1_cycles,
 * d1_peak_w, area_mm2, score, error; docs/tools.md "Results"), best,
 * repairs. */
char *tune_log_csv(const Tune *t);
/* The best point's plan text, with a header comment saying what it is
 * (NULL with *err before tune_run has measured the start). */
char *tune_best_text(const Tune *t, GError **err);
/* The plan text of a point (without a header): the template with the
 * knobs the point moves from the start written, the others as the
 * template has them. */
char *tune_point_text(const Tune *t, const TunePoint *p, GError **err);

#endif
