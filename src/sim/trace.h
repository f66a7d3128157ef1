/* trace.h - the timeline of a run for `tcc-sim --trace` (docs/tools.md):
 * what the simulator records while it runs (trace.c) and the Chrome
 * trace-event JSON written from it (trace_json.c).
 *
 * Recording is off unless SimOptions.trace is set; then the engine calls
 * the trace_* hooks below.  Per-unit traffic (HBM channels, NoC links) is
 * summed into buckets of a power-of-two number of cycles that doubles as
 * the run grows, so memory stays bounded however long the run. */
#ifndef TCC_TRACE_H
#define TCC_TRACE_H

#include <glib.h>
#include <stdint.h>
#include <stdio.h>

#include "program.h"
#include "sim.h"

/* One busy interval of an MMA array or a DMA engine's request port. */
typedef struct TraceSlice {
  int64_t t0, t1;  /* [t0, t1) */
  int track;       /* array sm*mma_arrays+a, or engine sm*dma_engines+e */
  int wg, pc;      /* the instruction */
} TraceSlice;

enum { TRACE_BUCKET_CAP = 2048 }; /* buckets kept per counter while running */

/* A delivery of a SIG (or of a RED round's completion) to its event: the
 * event's count after it, and the instruction that sent it (wg -1: the D1
 * host's release of an input row). */
typedef struct TraceSig {
  int64_t count;
  int wg, pc;
} TraceSig;

/* A WAIT and the SIG (or RED) whose delivery released it: the first
 * delivery that brought the event's count to the WAIT's. */
typedef struct TraceFlow {
  int src_wg, src_pc; /* the SIG or RED                                 */
  int dst_wg, dst_pc; /* the WAIT                                       */
  int event;
} TraceFlow;

typedef struct SimTrace {
  int nwgs;
  int *insn_base;     /* nwgs + 1: global index of (wg, pc) = insn_base[wg] + pc */
  int64_t *issue;     /* per instruction: issue cycle (-1: never issued)  */
  int64_t *done;      /* completion (a transfer's, a compute's, END's)     */
  int64_t *start;     /* first cycle of any of its actions (-1: none)      */
  SimEnergy *energy;  /* its dynamic energy (units, sim.h)                 */
  GArray *mma, *dma;  /* TraceSlice, in booking order                      */
  int nevents;
  GArray **sigs;      /* per event: TraceSig in delivery order (counts only
                         grow, so the first that reaches n is found by
                         bisection)                                        */
  GArray *snap_src;   /* TraceSig per clock snapshot (sim.c): the SIG or RED
                         whose EV_SIG carries it (count unused)            */
  GArray *flows;      /* TraceFlow, one per WAIT a SIG or RED released, in
                         issue order                                       */
  /* counters: HBM channels [0, hbm), NoC in-links [hbm, hbm+sms), NoC
   * out-links [hbm+sms, hbm+2*sms); lines or bytes per bucket */
  int ncounters, hbm, sms;
  int64_t bucket;     /* cycles per bucket (a power of two)                */
  double *count;      /* ncounters x TRACE_BUCKET_CAP                      */
  /* dynamic energy (units) per unit class (sim.h UnitClass) per bucket,
   * from the same sim_energy calls that build the power runs, spread over
   * the cycles as they are (--plot) */
  SimEnergySum *unit_e; /* UC__COUNT x TRACE_BUCKET_CAP                    */
  /* filled when the run ends (trace_finish) */
  int64_t cycles;
  double static_w, peak_w;
  int64_t peak_start;
  int64_t *pw_t;      /* the power trace as runs (a copy, see sim_internal.h) */
  SimEnergy *pw_v;
  size_t pw_n;
} SimTrace;

SimTrace *trace_new(const Program *p);
void trace_free(SimTrace *t);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(SimTrace, trace_free)

/* Recording hooks (sim.c, dma.c). */
void trace_insn(SimTrace *t, int wg, int pc, int64_t issue, int64_t done);
void trace_unit(GArray *slices, int track, int64_t t0, int64_t t1, int wg, int pc);
void trace_count(SimTrace *t, int counter, int64_t cycle, double amount);
/* The EV_SIG carrying clock snapshot `snap` was sent by (wg, pc). */
void trace_sig_sent(SimTrace *t, int snap, int wg, int pc);
/* Event `ev` reached `count` by a delivery: of the EV_SIG carrying `snap`,
 * or (snap -1) the D1 host's. */
void trace_sig_delivered(SimTrace *t, int ev, int64_t count, int snap);
/* WAIT (wg, pc) for `n` on event `ev` passed: record the flow from the
 * delivery that released it (none when the count was there from the start
 * or came from the host). */
void trace_wait_passed(SimTrace *t, int ev, int64_t n, int wg, int pc);
/* `e` units of unit class `uc` spread over [start, start + dur) exactly as
 * sim_energy spreads them over the power trace (sim_spread). */
void trace_energy(SimTrace *t, int uc, int64_t start, int64_t dur, SimEnergy e);

/* The power runs of a finished run (pw_t, pw_v) with their prefix energy,
 * for averages over any span in O(log runs): trace_json.c's counters and
 * plot.c's curves. */
typedef struct TraceRuns {
  const int64_t *t0;
  const SimEnergy *v;
  size_t n;
  SimEnergySum *pre;  /* pre[i] = energy before cycle t0[i]                */
} TraceRuns;
void trace_runs_init(TraceRuns *r, const SimTrace *t);
void trace_runs_clear(TraceRuns *r);
/* Dynamic energy (units) over [0, x). */
SimEnergySum trace_runs_energy_before(const TraceRuns *r, int64_t x);
/* Average power in W over [a, b) (a < b), static_w included. */
double trace_runs_avg_w(const TraceRuns *r, double static_w, int64_t a, int64_t b);

/* Limits of the JSON (docs/tools.md "Trace"): past them instructions and
 * unit slices are aggregated, counters coarsened. */
typedef struct TraceLimits {
  int max_insn_slices;   /* slices on the WG tracks          */
  int max_unit_slices;   /* slices on the MMA and DMA tracks */
  int max_buckets;       /* points per counter track         */
  int max_flows;         /* SIG -> WAIT arrows (0: none)     */
} TraceLimits;
/* The ranges tcc-sim accepts for them (--trace-max-slices, ...). */
enum { TRACE_MAX_LIMIT = 10000000 };
void trace_limits_default(TraceLimits *l);

/* Write the Chrome trace-event JSON of a finished run to `file`, as every
 * output file is written (outfile.h: whole, or not at all).  On success
 * *note is NULL, or says what was aggregated (for stderr).  FALSE with
 * *err = "FILE:1:1: error: cannot write: REASON", or "tcc-sim: error:
 * --trace: cannot load the JSON module: REASON" (jdoc.h; nothing written). */
gboolean trace_write(const Program *p, const SimTrace *t, const TraceLimits *lim, const char *file,
                     char **note, GError **err);
/* The same JSON to the stream `f` (tcc-sim's output file, opened before
 * the run), flushed, not closed; `file` names it in *err. */
gboolean trace_write_to(const Program *p, const SimTrace *t, const TraceLimits *lim, FILE *f, const char *file,
                        char **note, GError **err);
/* The same JSON as a string (tests); NULL with *err when the JSON module
 * cannot be loaded. */
char *trace_json(const Program *p, const SimTrace *t, const TraceLimits *lim, char **note, GError **err);

#endif
