/* sim_internal.h - the simulator's state, shared by sim.c (engine, issue,
 * synchronisation), dma.c (transfer timing), exec.c (FP32 semantics) and
 * power.c.  Not part of the public API (sim.h). */
#ifndef TCC_SIM_INTERNAL_H
#define TCC_SIM_INTERNAL_H

#include "calendar.h"
#include "evq.h"
#include "sim.h"
#include "trace.h"

#define T_INF INT64_MAX

/* A byte range of one WG's RF touched by an instruction; `region` lets two
 * windows of the same region be compared exactly as rectangles. */
typedef struct Range {
  int region;
  int r0, rows, c0, cols;
  uint32_t lo, hi; /* bytes [lo, hi) in the WG's RF (bounding) */
} Range;

/* An RF range an in-flight instruction reads or writes, until `done`
 * (T_INF while a RED round is incomplete). */
typedef struct Rec {
  Range rg;
  gboolean write;
  int64_t done;
  int red;     /* event id of the pending RED group, or -1 */
  int src_wg;  /* for incoming remote writes: the sender */
  int pc;      /* the instruction (of src_wg for incoming writes) */
  int64_t epoch; /* incoming: the sender's epoch at issue (see Sim.vc) */
} Rec;

/* A growable array of Rec: a WG's own instructions in flight, or other
 * WGs' transfers into its RF.  Every issue prunes one and appends up to
 * four records: inline here, where GArray's append and resize calls cost
 * ~6% of the simulator's instructions on the bench. */
typedef struct RecVec {
  Rec *v;
  guint len, cap;
} RecVec;

static inline void recvec_push(RecVec *a, const Rec *r) {
  if (a->len == a->cap) {
    a->cap = a->cap ? 2 * a->cap : 16;
    a->v = g_renew(Rec, a->v, a->cap);
  }
  a->v[a->len++] = *r;
}

/* A WG's access to a range of its own RF that other WGs write into (a
 * `remote` region), with its epoch: a remote write into the range must be
 * ordered after it by events (docs/machine.md §3, races). */
typedef struct Access1 {
  Range rg;
  gboolean write;
  int pc;
  int64_t t, epoch;
} Access1;

/* The RF ranges an instruction reads (up to 3, plus MMA's accumulator) and
 * writes (at most 1; for LD.mc, the issuer's own target region if listed;
 * for ST wgN.d, d if N is the issuer). */
typedef struct Access {
  Range rg[4];
  gboolean wr[4];
  int n;
} Access;

/* What the hot paths need of a region (Program.regions holds pointers to
 * the full records, one cache miss each): its place, and the partitions it
 * covers as a mask when it lies inside one partition (0: compute per
 * window). */
typedef struct Geo {
  uint32_t byte;
  int cols, wg;
  uint32_t pad;
  uint64_t parts;
} Geo;

/* What the hot paths need of an operand (Program.refs), worked out once
 * per run (sim_init): its range, the partitions it touches, its elements.
 * The absent operand (id 0) has region -1 and no parts. */
typedef struct RefInfo {
  Range rg;
  int64_t elems;       /* rows * cols                                   */
  int64_t bytes;       /* 4 * rows * cols                               */
  uint64_t parts;      /* sim_parts                                     */
} RefInfo;

typedef enum { WG_IDLE, WG_RUN, WG_WAIT_EV, WG_BLOCK_RED, WG_DONE } WgState;

typedef struct Wg {
  int id, sm;
  const WgCode *code;
  int pc;
  WgState state;
  int64_t t;          /* earliest issue time of insns[pc]                  */
  int64_t last_done;  /* latest completion of issued work (finite part)    */
  int pending_red;    /* issued REDs whose round is incomplete             */
  int64_t end;        /* completion of the WG (valid in WG_DONE)           */
  int acc_pc;         /* the pc whose ranges `acc` holds (-1: none): an    */
  Access acc;         /* instruction that stalls is tried again, unchanged */
  int clear_pc;       /* the pc whose hazards clear from cycle clear_t on  */
  int64_t clear_t;    /* (-1: none): own records only change by its issue */
  int64_t wait_n;     /* WG_WAIT_EV: count awaited                         */
  int wait_ev;
  RecVec inflight;    /* own instructions in flight                        */
  RecVec incoming;    /* other WGs' transfers into this RF, in flight,
                         or landed and not yet ordered by an event         */
  GArray *accesses;   /* Access1: the last access to each window of a
                         remote region                                      */
  float *rf;          /* rf_kib*256 words                                  */
  uint8_t *valid;     /* one byte per RF word: written at least once       */
} Wg;

/* A DMA transfer waiting for its completion time. */
typedef struct Xfer {
  int wg, pc;
  int64_t done;
} Xfer;

/* One round of a RED group. */
typedef struct RedContrib {
  int wg, pc;
  float *data;
} RedContrib;
typedef struct RedGroup {
  int64_t n;          /* contributions expected this round (0: no round)   */
  int unit;           /* REDUCE unit of the round                          */
  int64_t unit_done;  /* when the unit has added every contribution so far */
  GArray *contrib;    /* RedContrib: the timing's (data NULL)               */
  GArray *fcontrib;   /* RedContrib: the data, gathered by FN_RED_SRC       */
} RedGroup;

/* The functional side of a run (docs/machine.md §5, "Timing does not
 * depend on the data"): every point where the data is read, checked or
 * written, in the order the timing reaches it.  A full run applies each at
 * once (fn_apply); a recording run logs it, and sim_check replays the log
 * on a seed's data with the same fn_apply. */
typedef enum {
  FN_STORE_SRC, /* wg, pc: a store's source must have been written        */
  FN_COMPUTE,   /* wg, pc: a compute instruction (checks, then computes)   */
  FN_RED_SRC,   /* wg, pc: a RED contribution (check, gather)              */
  FN_RED_DONE,  /* a = group: the sum into every contributor's d           */
  FN_XFER,      /* wg, pc: a completed transfer copies its data            */
  FN_HOST       /* a = step: the D1 host writes input row `step`           */
} FnKind;
typedef struct FnAct {
  int kind, a, pc;    /* FnKind; a = wg (or group, step); pc               */
} FnAct;


typedef struct Sim {
  const Program *p;
  const SimOptions *o;
  const Machine *m;
  int nwgs, vl, part_bytes, rf_words;
  int64_t log2_vl;     /* a row reduction's extra cycles (machine.md §4)   */
  /* dma.c's per-piece arithmetic without divisions: part_bytes and the
   * channel count as shift and mask when powers of two (-1 otherwise); a
   * NoC link's slots per cycle and bytes per slot */
  int part_shift, chan_mask;
  int64_t noc_k, noc_slot;
  Geo *geo;            /* per region (Program.regions)                     */
  const RfRef *refs;   /* Program.refs: the instructions' operands (REF)   */
  RefInfo *ri;         /* per operand (REFI)                               */
  Wg *wg;
  float *hbm;
  uint64_t hbm_words;
  float **sh;          /* per SM (NULL when sh_kib = 0)                    */
  int64_t now;
  EvQueue q;           /* every event, in the engine's order (evq.h)       */
  /* resources */
  Cal *chan, *noc_in, *noc_out, *sh_port, *rf_rd, *rf_wr;
  int64_t *mma_free, *vec_free, *sfu_free, *red_free;
  int64_t *slot_free;  /* sms * engines * depth                            */
  int64_t *req_free;   /* sms * engines                                    */
  /* events and RED */
  int nevents;
  int64_t *ev_count;
  /* happens-before, for races across WGs: vector clocks.  vc[w*nwgs + v]
   * is the last epoch of WG v that WG w is ordered after (its own epoch at
   * v == w: 1 + the SIGs it has issued).  A SIG carries its WG's clock
   * (a snapshot in snaps) to the event's clock ev_vc; a WAIT that passes
   * joins the event's clock into its WG's; RED rounds join their
   * contributors; the D1 host's ev.in carries the clocks of the stores it
   * saw.  remote[region]: some other WG writes into the region. */
  int64_t *vc, *ev_vc, *host_vc;
  GArray *snaps;       /* int64_t[nwgs] each                               */
  GArray *snap_free;   /* int: free snapshot indices                       */
  uint8_t *remote;
  RedGroup *red;
  /* transfers */
  GArray *xfers;       /* Xfer                                             */
  GArray *xfer_free;   /* int: free indices                                */
  /* power (energy units per cycle, sim.h SimEnergy).  Recent cycles: a
   * difference array dp over [dp_base, dp_base + dp_cap), zero past max_t.
   * Cycles before dp_base (behind the clock: no energy lands there any
   * more) are folded into runs of equal power: pw_v[i] from cycle pw_t[i]
   * on.  Memory follows the actions and the booking horizon, not the cycle
   * count. */
  SimEnergy *dp;
  int64_t dp_base, dp_cap;
  SimEnergy pw_rate;   /* power at dp_base - 1 (the last run's value)      */
  int64_t *pw_t;
  SimEnergy *pw_v;
  size_t pw_n, pw_cap;
  SimEnergySum uc_energy[UC__COUNT];
  double uc_busy[UC__COUNT];
  /* profile: per instruction (global index = insn_base[wg] + pc) */
  int *insn_base;
  SimEnergy *ie;
  int64_t *istart, *iend;
  int64_t *iissue;     /* --profile: the cycle it issued, or -1 (stages.c) */
  int64_t *ilines;     /* --profile: the HBM lines it moved (stages.c)     */
  SimTrace *tr;        /* --trace: the timeline being recorded, or NULL   */
  /* D1 host */
  int steps;
  int64_t *release_t;  /* per step: T_INF until released                  */
  uint8_t *out_mark;   /* steps * d_model                                  */
  int *out_count;
  uint64_t x_in_addr, out_addr, row_bytes;
  /* exec.c's scratch buffers */
  float *tmp[2];
  long tmp_cap[2];
  /* recording run (sim_time): the functional actions, in order          */
  GArray *fnlog;       /* FnAct, or NULL                                   */
  /* results */
  GError *err;
  int64_t insns, mma_blocks, hbm_lines, max_t;
} Sim;

/* An instruction's RF operand (Insn.d, a, b, c, dst). */
static inline const RfRef *REF(const Sim *s, uint32_t id) { return &s->refs[id]; }
/* Its range, parts and elements (RefInfo). */
static inline const RefInfo *REFI(const Sim *s, uint32_t id) { return &s->ri[id]; }

/* sim.c */
void sim_trace_grow(Sim *s, int64_t start, int64_t end);
void sim_energy_insn(Sim *s, int64_t start, int64_t end, SimEnergy e, int wg, int pc);

/* Spread `e` units exactly over [start, start+dur) (dur >= 1) of a
 * difference array `dp` whose element 0 is cycle `base`: e / dur in every
 * cycle, and one more in each of the first e % dur cycles, so that the
 * cycles sum to e (docs/machine.md §5). */
static inline void sim_spread(SimEnergy *dp, int64_t base, int64_t start, int64_t dur, SimEnergy e) {
  int64_t end = start + dur;
  if (dur == 1) { /* the commonest case (an HBM line, an RF port cycle): no division */
    dp[start - base] += e;
    dp[end - base] -= e;
    return;
  }
  SimEnergy q = e / dur, r = e % dur;
  dp[start - base] += q + 1;
  dp[start + r - base] -= 1;
  dp[end - base] -= q;
}

/* Spread `e` energy units over [start, start+dur) of the power trace (a
 * difference array of units per cycle; sim_spread), and account it to its
 * unit class and, with --profile, to its instruction (with --trace or
 * --plot, to its unit class's buckets too).  Inline: every HBM line, NoC
 * crossing and RF port cycle of every transfer comes here.  start >= the
 * clock, dur >= 1. */
static inline void sim_energy(Sim *s, UnitClass uc, int64_t start, int64_t dur, SimEnergy e,
                              int wg, int pc) {
  int64_t end = start + dur;
  if (start < s->dp_base || end - s->dp_base >= s->dp_cap) sim_trace_grow(s, start, end);
  sim_spread(s->dp, s->dp_base, start, dur, e);
  s->uc_energy[uc] += e;
  if (end > s->max_t) s->max_t = end;
  if (s->ie) sim_energy_insn(s, start, end, e, wg, pc);
  if (s->tr) trace_energy(s->tr, uc, start, dur, e);
}
void sim_fail(Sim *s, int wg, int pc, const char *fmt, ...) G_GNUC_PRINTF(4, 5);
void sim_push(Sim *s, int64_t t, EvType type, int a, int64_t n);
Range sim_range(const Sim *s, const RfRef *r);
/* Partitions touched by an RF window, as a bit mask. */
uint64_t sim_parts(const Sim *s, const RfRef *r);

/* dma.c: book every resource a transfer uses; returns its completion time. */
int64_t dma_schedule(Sim *s, Wg *w, const Insn *in, int64_t start, int engine);
/* dma.c: one NoC crossing of `len` bytes arriving at t; returns arrival. */
int64_t dma_noc(Sim *s, Cal *link, uint64_t len, int64_t t, int wg, int pc);

/* exec.c: FP32 semantics.  FALSE after sim_fail(). */
gboolean exec_check_read(Sim *s, Wg *w, int pc, const RfRef *r, const char *what);
gboolean exec_compute(Sim *s, Wg *w, int pc);
void exec_transfer(Sim *s, int wg, int pc);
float *exec_gather(Sim *s, Wg *w, const RfRef *r);
void exec_scatter(Sim *s, Wg *w, const RfRef *r, const float *data);

#endif
