/* sim.h - running an assembled program: timing, numerics, energy and power
 * (docs/machine.md §4, §5) and the workload check (docs/workloads.md). */
#ifndef TCC_SIM_H
#define TCC_SIM_H

#include <glib.h>
#include <stdint.h>

#include "program.h"

typedef struct SimOptions {
  uint64_t seed;         /* workload data seed (grading: 7)              */
  int64_t max_cycles;    /* cycle limit (runaway programs), 1..TCC_MAX_COUNT;
                            sim_run clamps other values into that range  */
  gboolean timing_only;  /* skip functional execution and the check      */
  gboolean profile;      /* keep per-instruction energy for the hot window */
  gboolean keep_hbm;     /* hand the final HBM image to SimResult.hbm (tests) */
  gboolean trace;        /* record the timeline into SimResult.trace (trace.h) */
} SimOptions;

/* Unit classes of the profile (energy and utilisation). */
typedef enum {
  UC_MMA, UC_VEC, UC_SFU, UC_RED, UC_DMA, UC_HBM, UC_NOC, UC_SH, UC_RF, UC__COUNT
} UnitClass;
extern const char *const sim_unit_class_name[UC__COUNT];

typedef struct SimTrace SimTrace; /* trace.h */

/* Energy as the simulator counts it (docs/machine.md §5): an exact number
 * of units of 1/EU_PER_PJ pJ (machine.h).  One action, one cycle, one
 * 1000-cycle window or one instruction fits int64 by far; a sum over a
 * run (a unit class, a stage, a group, the total) is 128-bit, which no run
 * up to the cycle limit can overflow.  Integers add exactly in any order;
 * a figure becomes pJ, uJ or W only when it is printed. */
typedef int64_t SimEnergy;
__extension__ typedef __int128 SimEnergySum;
static inline double sim_e_pj(SimEnergySum e) { return (double)e / EU_PER_PJ; }
static inline double sim_e_nj(SimEnergySum e) { return (double)e / (EU_PER_PJ * 1e3); }
static inline double sim_e_uj(SimEnergySum e) { return (double)e / (EU_PER_PJ * 1e6); }
/* Average dynamic power in W of `e` spread over `cycles` ns (pJ/ns = mW). */
static inline double sim_e_w(SimEnergySum e, int64_t cycles) {
  return (double)e / ((double)cycles * (EU_PER_PJ * 1e3));
}

typedef struct HotInsn {
  int wg, pc;            /* instruction = prog->wgs[wg].insns[pc]        */
  SimEnergy energy;      /* its dynamic energy inside the hottest window */
} HotInsn;

/* One stage of the program (--profile; stages.c): the instructions whose
 * comments name a task of that stage (hot_groups.c's stage key), where
 * they ran and what their WGs waited for.  The WG-cycles between a WG's
 * consecutive issues (from cycle 0 for its first) count where the WG spent
 * them: `wait` before a WAIT (its event), `pace` after a WAITT (the plan's
 * spacing), `stall` before any other instruction (an operand still in
 * flight, a busy unit or DMA slot, an RF port). */
typedef struct SimStage {
  char *name;             /* "l0.w1", "t3.l1.wo"; "(none)" without a comment */
  int64_t start, end;     /* first issue; last cycle any of its work is active */
  int wgs;                /* WGs that ran its instructions                 */
  int64_t insns, mma_blocks, hbm_lines;
  int64_t wait, pace, stall; /* WG-cycles, as above                        */
  SimEnergySum energy;    /* its instructions' dynamic energy              */
} SimStage;

/* The WG-cycles of a run's WAITs (its `wait` above) by stage and event
 * family (waits.c): the event's name with its trailing digits (a buffer,
 * row or step index) replaced by "*".  Largest wait first, ties by stage,
 * then family. */
typedef struct SimWaitGroup {
  char *stage;           /* owned */
  char *family;          /* "ev.l0_w1_k0_free*", owned */
  int64_t wait;          /* WG-cycles before its WAITs' issues */
  int64_t waits;         /* WAITs issued */
  int64_t max;           /* the longest one */
  int wgs;               /* WGs that issued them */
} SimWaitGroup;

typedef struct SimResult {
  int64_t cycles;
  double area_mm2;
  double static_w;
  double peak_w;          /* hottest 1000-cycle window average            */
  int64_t peak_start;     /* window [peak_start, peak_start + 1000)       */
  SimEnergy peak_e;       /* the window's dynamic energy (peak_w without static) */
  SimEnergySum dyn_e;     /* the run's dynamic energy                      */
  SimEnergySum unit_e[UC__COUNT]; /* ... by unit class                   */
  double energy_uj;       /* total, static included (from dyn_e)          */
  double unit_energy_uj[UC__COUNT]; /* unit_e in uJ                       */
  double unit_busy[UC__COUNT]; /* busy fraction of the class's capacity   */
  int64_t insns;          /* instructions issued                          */
  int64_t mma_blocks;
  int64_t hbm_lines;
  WlCheck check;          /* numerics (unset when timing_only)            */
  gboolean checked;
  HotInsn *hot;           /* profile: instructions overlapping the window */
  int nhot;               /* sorted by energy, largest first              */
  SimStage *stages;       /* profile: every stage, by start, then name     */
  int nstages;
  SimWaitGroup *waits;    /* profile: WAITs by stage and event family (waits.c) */
  int nwaits;
  float *hbm;             /* keep_hbm: final HBM (abi.hbm_bytes / 4 floats) */
  SimTrace *trace;        /* SimOptions.trace: the timeline (trace.h)      */
} SimResult;

/* The hottest window's energy by what made each instruction (--profile;
 * hot_groups.c): the comment's plan knob ("p1.multicast.w1:39"), the
 * task's stage ("l0.w1") or the task ("l0.w1.k0.mc0"); "(none)" when the
 * comment does not say.  ORDER-MATTERS: sim_hot_by_name. */
typedef enum { HOT_BY_KNOB, HOT_BY_STAGE, HOT_BY_TASK, HOT_BY__COUNT } HotBy;
extern const char *const sim_hot_by_name[HOT_BY__COUNT]; /* "knob", "stage", "task" */
typedef struct HotGroup {
  char *name;            /* owned (the array's clear function frees it)  */
  SimEnergySum energy;   /* its instructions' energy inside the window   */
  int insns;             /* instructions of the group in r->hot          */
} HotGroup;
/* The key of a source line (an Insn's text) under `by` (g_free it). */
char *sim_hot_key(const char *text, HotBy by);
/* Every group of r->hot (all of it, not only the 20 shown), largest
 * energy first, ties by name: a GArray of HotGroup (g_array_unref). */
GArray *sim_hot_groups(const Program *p, const SimResult *r, HotBy by);

/* What a --profile run records per instruction (global index
 * insn_base[wg] + pc): the cycle it issued (-1: never), the last cycle of
 * its work, its dynamic energy and the HBM lines it moved. */
typedef struct SimInsnRecords {
  const int *insn_base;
  const int64_t *issue, *end;
  const SimEnergy *energy;
  const int64_t *hbm_lines;
} SimInsnRecords;
/* The stage of every reached instruction (stages.c): of[insn_base[wg] +
 * pc] indexes names (first-seen order, hot_groups.c's stage key; an END
 * without a task takes its WG's stage before it), -1 when never issued.
 * stages.c and waits.c group by it. */
typedef struct SimInsnStages {
  int *of;
  GPtrArray *names;      /* char*, owned */
} SimInsnStages;
void sim_insn_stages(const Program *p, const SimInsnRecords *rec, SimInsnStages *out);
void sim_insn_stages_clear(SimInsnStages *is);
/* The stages of a run (stages.c; sim.c's finish, with --profile). */
SimStage *sim_stages(const Program *p, const SimInsnRecords *rec, const SimInsnStages *is, int *nstages);
void sim_stages_free(SimStage *st, int n);
SimWaitGroup *sim_waits(const Program *p, const SimInsnRecords *rec, const SimInsnStages *is, int *ngroups);
void sim_waits_free(SimWaitGroup *g, int n);

void sim_options_default(SimOptions *o);
/* TRUE (default): a plain load from HBM and a store to HBM book their
 * pieces on a fast path with the same result (dma.c); tests set FALSE to
 * compare against the general one. */
extern gboolean sim_dma_fast_path;
/* TRUE (default): an instruction tried again after a stall skips the
 * hazard scan it already passed (sim.c); tests set FALSE to compare. */
extern gboolean sim_hazard_cache;
/* Run `prog`.  FALSE with *err = "file:line:col: error: ..." on a run-time
 * error, deadlock or cycle limit (exit code 2 class).  On success fills *res. */
gboolean sim_run(const Program *prog, const SimOptions *opt, SimResult *res,
                 GError **err);
void sim_result_clear(SimResult *res);

/* Grade once, check many (tcc-grade).  Timing, energy, power and area do
 * not depend on the data (docs/machine.md §8), so sim_time runs the timing
 * once and records where the data is read, checked and written, in order;
 * sim_check replays that on one seed's data.  sim_check(sim_time(p, o),
 * seed) gives what sim_run(p, o with that seed) gives: the same SimResult
 * (profile and keep_hbm aside), or the same error.  `ref` is the seed's
 * wl_reference, or NULL to compute it.  sim_check only reads the SimTiming
 * and the WlRef: several threads may check seeds of one timing at once.
 * The Program must outlive its SimTiming. */
typedef struct SimTiming SimTiming;
SimTiming *sim_time(const Program *prog, const SimOptions *opt);
gboolean sim_check(const SimTiming *t, uint64_t seed, const WlRef *ref, SimResult *res,
                   GError **err);
void sim_timing_free(SimTiming *t);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(SimTiming, sim_timing_free)
/* The timing run's result (sim_run's with timing_only: cycles, energy,
 * power, no numerics), or NULL with a copy of its error in *err (may be
 * NULL) when the run failed. */
const SimResult *sim_timing_result(const SimTiming *t, GError **err);

/* The hottest window (docs/machine.md §5) of a per-cycle dynamic energy
 * trace e[0..n): the largest sum over `window` consecutive cycles [s,
 * s+window), 0 <= s <= max(0, n-window), the first such s into *start (a
 * trace shorter than the window is summed over [0, n)).  Exact integers:
 * the power is sim_e_w(sum, window) + static W.  O(n).  (power.c) */
SimEnergy sim_peak_window(const SimEnergy *e, int64_t n, int64_t window, int64_t *start);
/* The same for the trace given as runs: e(t) = v[i] for the last i with
 * t0[i] <= t (t0 ascending, t0[0] = 0, nruns >= 1).  O(nruns), whatever
 * n.  (power.c) */
SimEnergy sim_peak_window_runs(const int64_t *t0, const SimEnergy *v, size_t nruns, int64_t n,
                               int64_t window, int64_t *start);

/* Reports (report.c). */
typedef struct ReportOptions {
  gboolean json, profile;
  uint64_t seed;
} ReportOptions;
/* The text report, or with ro->json the JSON one (the result schema of
 * docs/tools.md, printed by the JSON module: NULL with *err when it cannot
 * be loaded). */
char *sim_report(const Program *prog, const SimResult *res, const ReportOptions *ro, GError **err);

/* The constraints of a correct program in the order of the verdicts, as a
 * result's `status` and `failures` name them: "numerics", "area", "power". */
extern const char *const sim_constraint_name[3];
/* SHA-256 of the canonical `.machine` line: the report's hardware hash. */
char *sim_hardware_sha256(const Program *prog);
/* For an area or power FAIL, one line each, `prefix` first, saying where to
 * look: the area's largest component and the hardware keys that size it;
 * the hottest window's largest share by plan knob, from `profiled` (a run
 * of the program with profile set; NULL: a line pointing to --profile).  NULL when both
 * pass. */
char *sim_verdict_hint(const Program *prog, const SimResult *res, const SimResult *profiled, const char *prefix);
/* 0 = correct and within budgets, 1 = a constraint fails. */
int sim_verdict_exit(const Program *prog, const SimResult *res);

#define SIM_RUN_ERROR (sim_run_error_quark())
GQuark sim_run_error_quark(void);

#endif
