/* fit.h - power fitting: the compiled program made to keep its hottest
 * 1000-cycle window under the machine's power limit (fit.c).
 *
 * A plan says how to tile, place and schedule; the power limit is the
 * compiler's to keep, as a C compiler keeps registers.  fit_pipeline
 * compiles the section, measures the program with the bundled simulator
 * (timing only: the timing and the energy do not depend on the data), and
 * when the window is over FIT_LIMIT_W less FIT_MARGIN_W it tightens the
 * load pacing and compiles again, searching for the fastest program under
 * the limit (docs/compiler.md, "Power fitting").  With `power.fit: off` it
 * is pass_pipeline. */
#ifndef TCC_FIT_H
#define TCC_FIT_H

#include "ir.h"
#include "plan.h"

/* The limit a program must keep (docs/machine.md) and the margin the
 * fitting keeps below it: a thousandth of a watt, the last digit tcc-sim
 * prints but one.  It needs no more: the fitting measures the very program
 * it writes with the simulator tcc-sim and tcc-grade run, and the
 * simulator's figures are the same on every machine and build. */
#define FIT_LIMIT_W POWER_LIMIT_W /* machine.h */
#define FIT_MARGIN_W 0.001
/* The byte bucket the fitting paces by when the plan has none: 4 KiB, one
 * 32 x 32 FP32 block. */
#define FIT_BUCKET_BYTES 4096
/* power.fit: relax lowers the pacing knobs of a program at least this far
 * under the limit (a program nearer it keeps the values written for it). */
#define FIT_RELAX_HEADROOM_W 1.0
/* The stage-rate rung's level L: each stage loads FIT_STAGE_BYTES per L
 * cycles (power.stage_rate = FIT_STAGE_BYTES / L bytes a cycle). */
#define FIT_STAGE_BYTES 65536
/* At most this many capacity fallbacks before a refusal stands. */
#define FIT_MAX_FALLBACKS 16
/* The largest event interval it tries (the knob's maximum). */
#define FIT_MAX_INTERVAL 100000

typedef struct FitResult {
  int64_t cap;              /* fit_pipeline_capped's cap (0: none)        */
  gboolean slower;          /* NULL returned: over the limit as written,   */
                            /* in `cap` cycles or more: not fitted         */
  int runs;                 /* pipeline runs, the first included (0: none) */
  gboolean measured;        /* power.fit on: the runs were simulated       */
  double first_w, peak_w;   /* the plan's program and the one returned     */
  int64_t first_cycles, cycles;
  int64_t added;            /* cycles added to the event interval (0: none) */
  gboolean changed;         /* the returned program's schedule was fitted  */
  gboolean relaxed;         /* ... by power.fit: relax (its pacing knobs  */
                            /* lowered), not paced                         */
  gboolean spaced;          /* ... by the hot stages' own spacings (P1),  */
                            /* not by load pacing                          */
  gboolean overrode;        /* ... and changed a knob the plan wrote       */
} FitResult;

/* Compile problem `kind` of `plan` (pass_pipeline) and fit it under the
 * power limit.  `dump_after`, `dump` and `verify` as for pass_pipeline (the
 * dump is that of the returned program).  NULL with an error when the plan
 * does not compile, or when no pacing within the knobs' ranges brings the
 * program under the limit (the message gives the watts measured).  *res
 * (may be NULL) gets the account; the returned Ir's fit_note says it in
 * one line when the schedule was changed. */
Ir *fit_pipeline(const Plan *plan, ProblemKind kind, const char *dump_after, char **dump, gboolean verify,
                 FitResult *res, GError **err);
/* fit_pipeline for a search that only wants programs faster than `cap`
 * cycles (> 0; tcc-tune: its best so far).  When the plan's program is
 * over the limit as written and already takes `cap` cycles or more, it is
 * not fitted (the fitting's pacing and fewer SMs slow a program): NULL
 * with res->slower, a one-line error, and res->first_w and first_cycles
 * of that program.  Otherwise the answer is fit_pipeline's, the very same
 * program, whatever its cycles: the cap never changes the search. */
Ir *fit_pipeline_capped(const Plan *plan, ProblemKind kind, int64_t cap, const char *dump_after, char **dump,
                        gboolean verify, FitResult *res, GError **err);

/* The returned program as the fitting last ran it, for a caller that runs
 * it again (tcc-grade checks every seed on it, sim_check): assembled from
 * be_emit's text of the returned Ir, named PLAN[p1].asm (PLAN: the plan's
 * file, or -), and its timing run (sim_time, timing only).  Both NULL when
 * the fitting did not keep them: power.fit off, the winner measured with a
 * profile, or a fitting note in the program's header, which changes its
 * text after the run.  The caller owns them (fit_kept_clear). */
typedef struct Program Program;
typedef struct SimTiming SimTiming;
typedef struct FitKept {
  Program *prog;
  SimTiming *timing; /* of prog */
} FitKept;
/* fit_pipeline, keeping the program's run in *kept (both NULL first). */
Ir *fit_pipeline_kept(const Plan *plan, ProblemKind kind, FitResult *res, FitKept *kept, GError **err);
void fit_kept_clear(FitKept *kept);

#endif
