/* sim.c - the discrete-event engine: per-WG in-order issue, hazards on RF
 * ranges, unit scheduling, events, RED rounds, the D1 host, and the run-time
 * errors (docs/machine.md §3-§4).
 *
 * One queue (evq.h) orders everything by (time, insertion).  A WG pops when
 * its next instruction may issue; it issues as many instructions as it can
 * without passing the next event in the queue, so idle time is never
 * stepped. */
#include <math.h>
#include <stdarg.h>
#include <string.h>

#include "sim_internal.h"
#include "text_escape.h"

G_DEFINE_QUARK(tcc-sim-run-error-quark, sim_run_error)

const char *const sim_unit_class_name[UC__COUNT] = {
    "MMA", "VEC", "SFU", "REDUCE", "DMA", "HBM", "NoC", "SH", "RF"};

void sim_options_default(SimOptions *o) {
  memset(o, 0, sizeof *o);
  o->seed = 7;
  o->max_cycles = 100000000;
}

static int64_t maxi(int64_t a, int64_t b) { return a > b ? a : b; }

/* a + b for b >= 0, saturating at INT64_MAX (event counters, WAITT). */
static int64_t add_sat(int64_t a, int64_t b) { return a > INT64_MAX - b ? INT64_MAX : a + b; }

/* ---- errors ---------------------------------------------------------- */

void sim_fail(Sim *s, int wg, int pc, const char *fmt, ...) {
  if (s->err) return;
  va_list ap;
  va_start(ap, fmt);
  g_autofree char *msg = g_strdup_vprintf(fmt, ap);
  va_end(ap);
  const Insn *in = &s->p->wgs[wg].insns[pc];
  g_autofree char *name = text_escape(s->p->file); /* one line, whatever the name holds */
  g_set_error(&s->err, SIM_RUN_ERROR, 1, "%s:%d:%d: error: wg%d: %s", name, in->line, in->col, wg, msg);
}

/* ---- events ---------------------------------------------------------- */

void sim_push(Sim *s, int64_t t, EvType type, int a, int64_t n) {
  evq_add(&s->q, t, type, a, n, -1);
}

/* ---- energy ---------------------------------------------------------- */

/* Fold the difference array's cycles [dp_base, upto) into runs, in cycle
 * order: power(t) = power(t-1) + dp[t], the additions the dense trace made.
 * Cycles past max_t hold 0 and leave the power as it is.  Then the array
 * starts at `upto`. */
static void trace_fold(Sim *s, int64_t upto) {
  if (upto <= s->dp_base) return;
  /* max_t bounds the cycles touched (it may lie past the array: an END) */
  int64_t used = MIN(s->max_t + 1 - s->dp_base, s->dp_cap), touched = MIN(upto - s->dp_base, used);
  SimEnergy rate = s->pw_rate;
  for (int64_t i = 0; i < touched; i++) {
    rate += s->dp[i];
    if (rate != s->pw_v[s->pw_n - 1]) {
      if (s->pw_n == s->pw_cap) {
        s->pw_cap *= 2;
        s->pw_t = g_renew(int64_t, s->pw_t, s->pw_cap);
        s->pw_v = g_renew(SimEnergy, s->pw_v, s->pw_cap);
        /* the new halves, written next, in order: their pages in one call each */
        sim_prefault(s->pw_t + s->pw_n, sizeof(int64_t) * (s->pw_cap - s->pw_n));
        sim_prefault(s->pw_v + s->pw_n, sizeof(SimEnergy) * (s->pw_cap - s->pw_n));
      }
      s->pw_t[s->pw_n] = s->dp_base + i;
      s->pw_v[s->pw_n++] = rate;
    }
  }
  s->pw_rate = rate;
  /* keep [upto, max_t] at the front; zero the rest of what was used */
  int64_t shift = upto - s->dp_base, keep = MAX(used - shift, 0);
  if (keep > 0) memmove(s->dp, s->dp + shift, sizeof(SimEnergy) * (size_t)keep);
  if (used > keep) memset(s->dp + keep, 0, sizeof(SimEnergy) * (size_t)(used - keep));
  s->dp_base = upto;
}

/* Make room in the difference array for cycles [start, end] (sim_energy's
 * slow path): fold what lies behind the clock, then grow if the booking
 * horizon needs it (or if less than half the array would stay free, so
 * that folds stay rare). */
void sim_trace_grow(Sim *s, int64_t start, int64_t end) {
  if (start < s->dp_base) /* energy behind the clock: the simulator's own bug */
    g_error("sim: energy booked at cycle %" G_GINT64_FORMAT " behind the folded trace (%" G_GINT64_FORMAT ")",
            start, s->dp_base);
  trace_fold(s, MIN(s->now, start));
  int64_t need = end - s->dp_base + 1, cap = s->dp_cap;
  while (need > cap / 2) cap *= 2;
  if (cap != s->dp_cap) {
    s->dp = g_renew(SimEnergy, s->dp, cap);
    memset(s->dp + s->dp_cap, 0, sizeof(SimEnergy) * (size_t)(cap - s->dp_cap));
    s->dp_cap = cap;
  }
}

/* Per-instruction energy for --profile (sim_energy's slow path). */
void sim_energy_insn(Sim *s, int64_t start, int64_t end, SimEnergy e, int wg, int pc) {
  int k = s->insn_base[wg] + pc;
  s->ie[k] += e;
  if (start < s->istart[k]) s->istart[k] = start;
  if (end > s->iend[k]) s->iend[k] = end;
}

/* ---- happens-before (vector clocks, Sim.vc) -------------------------- */

static int64_t *clock_of(const Sim *s, int w) { return s->vc + (size_t)w * (size_t)s->nwgs; }

static void clock_join(const Sim *s, int64_t *dst, const int64_t *src) {
  for (int i = 0; i < s->nwgs; i++)
    if (src[i] > dst[i]) dst[i] = src[i];
}

static int64_t *snap_at(const Sim *s, int i) {
  return (int64_t *)(void *)(s->snaps->data + (size_t)i * g_array_get_element_size(s->snaps));
}

/* A copy of a clock, carried by an EV_SIG until it is delivered. */
static int snap_take(Sim *s, const int64_t *clock) {
  int i;
  if (s->snap_free->len) {
    i = g_array_index(s->snap_free, int, s->snap_free->len - 1);
    g_array_set_size(s->snap_free, s->snap_free->len - 1);
  } else {
    i = (int)s->snaps->len;
    g_array_set_size(s->snaps, s->snaps->len + 1);
  }
  memcpy(snap_at(s, i), clock, sizeof(int64_t) * (size_t)s->nwgs);
  return i;
}

/* An EV_SIG of `n` on event `ev` at t, carrying a copy of `clock`, sent by
 * instruction (wg, pc) (a SIG, or the RED that completed a round). */
static void push_sig(Sim *s, int64_t t, int ev, int64_t n, const int64_t *clock, int wg, int pc) {
  int snap = snap_take(s, clock);
  if (s->tr) trace_sig_sent(s->tr, snap, wg, pc);
  evq_add(&s->q, t, EV_SIG, ev, n, snap);
}

/* ---- RF ranges and hazards ------------------------------------------ */

Range sim_range(const Sim *s, const RfRef *r) {
  const Geo *g = &s->geo[r->region];
  uint32_t lo = g->byte + 4u * (uint32_t)(r->r0 * g->cols + r->c0);
  uint32_t hi = g->byte + 4u * (uint32_t)((r->r0 + r->rows - 1) * g->cols + r->c0 + r->cols);
  Range x = {r->region, r->r0, r->rows, r->c0, r->cols, lo, hi};
  return x;
}

uint64_t sim_parts(const Sim *s, const RfRef *r) {
  const Geo *g = &s->geo[r->region];
  if (g->parts) return g->parts; /* the region lies inside one partition */
  uint64_t mask = 0;
  for (int i = 0; i < r->rows; i++) {
    uint32_t lo = g->byte + 4u * (uint32_t)((r->r0 + i) * g->cols + r->c0);
    uint32_t hi = lo + 4u * (uint32_t)r->cols;
    for (uint32_t p = lo / (uint32_t)s->part_bytes; p * (uint32_t)s->part_bytes < hi; p++)
      mask |= 1ull << p;
  }
  return mask;
}

static gboolean overlap(const Range *a, const Range *b) {
  if (a->hi <= b->lo || b->hi <= a->lo) return FALSE;
  if (a->region != b->region) return TRUE; /* aliasing regions: conservative */
  return a->r0 < b->r0 + b->rows && b->r0 < a->r0 + a->rows && a->c0 < b->c0 + b->cols &&
         b->c0 < a->c0 + a->cols;
}

static void access_of(const Sim *s, const Wg *w, const Insn *in, Access *a) {
  const RefInfo *reads[3] = {REFI(s, in->a), REFI(s, in->b), REFI(s, in->c)};
  a->n = 0;
  /* LD and ST read a at most: their b and c bytes hold dst and mem
   * (program.h) */
  int nreads = in->op == OP_LD || in->op == OP_ST ? 1 : 3;
  for (int k = 0; k < nreads; k++)
    if (reads[k]->rg.region >= 0) {
      a->rg[a->n] = reads[k]->rg;
      a->wr[a->n++] = FALSE;
    }
  if (in->op == OP_LD && (in->mods & MOD_MC)) {
    for (int k = 0; k < sim_insn_ntargets(in); k++)
      if (in->targets[k] == w->id) {
        RfRef r = *REF(s, in->d);
        r.region = sim_insn_tregion(in, k);
        a->rg[a->n] = sim_range(s, &r);
        a->wr[a->n++] = TRUE;
      }
  } else if (REFI(s, in->d)->rg.region >= 0) {
    a->rg[a->n] = REFI(s, in->d)->rg;
    a->wr[a->n++] = TRUE;
  }
  /* `ST wgN.d, a` with N the issuer itself writes its own RF */
  if (in->op == OP_ST && in->space == MEM_RF && s->geo[REF(s, in->dst)->region].wg == w->id) {
    a->rg[a->n] = REFI(s, in->dst)->rg;
    a->wr[a->n++] = TRUE;
  }
}

static void prune(RecVec *recs, int64_t now) {
  /* the records before the first one done stay where they are, uncopied */
  guint i = 0, n = recs->len;
  while (i < n && recs->v[i].done > now) i++;
  if (i == n) return;
  guint k = i;
  for (i++; i < n; i++) {
    Rec *r = &recs->v[i];
    if (r->done > now) recs->v[k++] = *r;
  }
  recs->len = k;
}

/* Earliest time the instruction's hazards clear (T_INF: waits on a RED). */
static int64_t hazard(const Wg *w, const Access *a, int64_t now) {
  int64_t t = now;
  for (guint i = 0; i < w->inflight.len; i++) {
    const Rec *r = &w->inflight.v[i];
    for (int k = 0; k < a->n; k++)
      if ((r->write || a->wr[k]) && overlap(&r->rg, &a->rg[k])) t = maxi(t, r->done);
  }
  return t;
}

/* Forget the incoming transfers that have landed and that WG w is ordered
 * after (an event from the sender since). */
static void prune_incoming(const Sim *s, Wg *w, int64_t now) {
  const int64_t *clock = clock_of(s, w->id);
  guint k = 0;
  for (guint i = 0; i < w->incoming.len; i++) {
    Rec *r = &w->incoming.v[i];
    if (r->done > now || clock[r->src_wg] < r->epoch) w->incoming.v[k++] = *r;
  }
  w->incoming.len = k;
}

/* Another WG's transfer into this RF still in flight, or landed with no
 * event from its sender since: a race. */
static gboolean race(Sim *s, Wg *w, const Insn *in, int pc, const Access *a, int64_t now) {
  if (w->incoming.len == 0) return FALSE;
  prune_incoming(s, w, now);
  for (guint i = 0; i < w->incoming.len; i++) {
    const Rec *r = &w->incoming.v[i];
    for (int k = 0; k < a->n; k++)
      if (overlap(&r->rg, &a->rg[k])) {
        const Region *g = g_ptr_array_index(s->p->regions, r->rg.region);
        if (r->done > now)
          sim_fail(s, w->id, pc,
                   "race: %s accesses region '%s' while a transfer from wg%d into it is in "
                   "flight until cycle %" G_GINT64_FORMAT " (wait for an event first)",
                   sim_op_mnemonic[in->op], g->name, r->src_wg, r->done);
        else
          sim_fail(s, w->id, pc,
                   "race: %s accesses region '%s' that a transfer from wg%d (line %d) wrote at "
                   "cycle %" G_GINT64_FORMAT " with no event from wg%d since (wait for an event "
                   "first)", sim_op_mnemonic[in->op], g->name, r->src_wg,
                   s->p->wgs[r->src_wg].insns[r->pc].line, r->done, r->src_wg);
        return TRUE;
      }
  }
  return FALSE;
}

/* Remember WG w's access to `rg` (a window of a remote region) at its
 * current epoch: the last access to each window is enough, epochs only
 * grow. */
static void note_access(Sim *s, Wg *w, const Range *rg, gboolean write, int pc, int64_t t) {
  Access1 a = {*rg, write, pc, t, clock_of(s, w->id)[w->id]};
  for (guint i = 0; i < w->accesses->len; i++) {
    Access1 *o = &g_array_index(w->accesses, Access1, i);
    if (o->rg.region == rg->region && o->rg.r0 == rg->r0 && o->rg.rows == rg->rows &&
        o->rg.c0 == rg->c0 && o->rg.cols == rg->cols) {
      *o = a;
      return;
    }
  }
  g_array_append_val(w->accesses, a);
}

static void track(const Sim *s, RecVec *recs, const Range *rg, gboolean write, int64_t done, int red,
                  int src, int pc) {
  Rec r = {*rg, write, done, red, src, pc, src >= 0 ? clock_of(s, src)[src] : 0};
  recvec_push(recs, &r);
}

/* The mnemonic as written, with LD.mc's modifier (diagnostics). */
static const char *op_name(const Insn *in) {
  return in->op == OP_LD && (in->mods & MOD_MC) ? "LD.mc" : sim_op_mnemonic[in->op];
}

/* A transfer that writes range `rg` of another WG's RF (tw) while an earlier
 * write into it is in flight (another transfer, or tw's own instruction) or
 * tw's own instruction still reads it, or after tw read or wrote it with no
 * event from tw to the writer since: the result would depend on timing, so
 * it is a race (WAW / WAR across WGs), like a read of an incoming range. */
static gboolean remote_race(Sim *s, Wg *w, const Insn *in, int pc, Wg *tw, const Range *rg,
                            int64_t now) {
  const Region *g = g_ptr_array_index(s->p->regions, rg->region);
  const int64_t *mine = clock_of(s, w->id); /* what the writer is ordered after */
  for (guint i = 0; i < tw->incoming.len; i++) {
    const Rec *r = &tw->incoming.v[i];
    if (!overlap(&r->rg, rg)) continue;
    if (r->done <= now) {
      if (r->src_wg == w->id || mine[r->src_wg] >= r->epoch) continue;
      sim_fail(s, w->id, pc,
               "race: %s writes into wg%d's region '%s' that a transfer from wg%d (line %d) wrote "
               "at cycle %" G_GINT64_FORMAT " with no event from wg%d since (wait for its signal first)",
               op_name(in), tw->id, g->name, r->src_wg, s->p->wgs[r->src_wg].insns[r->pc].line,
               r->done, r->src_wg);
      return TRUE;
    }
    sim_fail(s, w->id, pc,
             "race: %s writes into wg%d's region '%s' while a transfer from wg%d (line %d) into "
             "it is in flight until cycle %" G_GINT64_FORMAT " (wait for an event first)",
             op_name(in), tw->id, g->name, r->src_wg,
             s->p->wgs[r->src_wg].insns[r->pc].line, r->done);
    return TRUE;
  }
  for (guint i = 0; i < tw->inflight.len; i++) {
    const Rec *r = &tw->inflight.v[i];
    if (r->done <= now || !overlap(&r->rg, rg)) continue;
    const Insn *o = &tw->code->insns[r->pc];
    if (r->done == T_INF)
      sim_fail(s, w->id, pc,
               "race: %s writes into wg%d's region '%s' while the result of wg%d's RED (line %d) "
               "into it is pending (wait for an event first)",
               op_name(in), tw->id, g->name, tw->id, o->line);
    else
      sim_fail(s, w->id, pc,
               "race: %s writes into wg%d's region '%s' while wg%d's %s (line %d) %s it until "
               "cycle %" G_GINT64_FORMAT " (wait for an event first)",
               op_name(in), tw->id, g->name, tw->id, op_name(o), o->line,
               r->write ? "writes" : "reads", r->done);
    return TRUE;
  }
  for (guint i = 0; i < tw->accesses->len; i++) {
    const Access1 *a = &g_array_index(tw->accesses, Access1, i);
    if (a->epoch <= mine[tw->id] || !overlap(&a->rg, rg)) continue;
    const Insn *o = &tw->code->insns[a->pc];
    sim_fail(s, w->id, pc,
             "race: %s writes into wg%d's region '%s' that wg%d's %s (line %d, issued at cycle "
             "%" G_GINT64_FORMAT ") %s with no event from wg%d since (wait for its signal first)",
             op_name(in), tw->id, g->name, tw->id, op_name(o), o->line, a->t,
             a->write ? "wrote" : "read", tw->id);
    return TRUE;
  }
  return FALSE;
}

/* The remote destinations of a transfer (ST wgN.d; LD.mc's targets other
 * than the issuer), each checked by remote_race. */
static gboolean remote_races(Sim *s, Wg *w, const Insn *in, int pc, int64_t now) {
  if (in->op == OP_ST && in->space == MEM_RF) {
    const Region *g = g_ptr_array_index(s->p->regions, REF(s, in->dst)->region);
    Range rg = sim_range(s, REF(s, in->dst));
    return g->wg != w->id && remote_race(s, w, in, pc, &s->wg[g->wg], &rg, now);
  }
  if (in->op == OP_LD && (in->mods & MOD_MC))
    for (int k = 0; k < sim_insn_ntargets(in); k++) {
      if (in->targets[k] == w->id) continue;
      RfRef r = *REF(s, in->d);
      r.region = sim_insn_tregion(in, k);
      Range rg = sim_range(s, &r);
      if (remote_race(s, w, in, pc, &s->wg[in->targets[k]], &rg, now)) return TRUE;
    }
  return FALSE;
}

/* ---- the functional side ------------------------------------------- */

/* Apply one functional action to the data (FALSE after sim_fail). */
static void red_apply(Sim *s, int g);
static gboolean fn_apply(Sim *s, FnKind kind, int a, int pc) {
  if (kind == FN_RED_DONE) {
    red_apply(s, a);
    return TRUE;
  }
  if (kind == FN_HOST) {
    wl_release_input(&s->p->prob, &s->p->abi, s->o->seed, a, s->hbm);
    return TRUE;
  }
  Wg *w = &s->wg[a];
  const Insn *in = &w->code->insns[pc];
  switch (kind) {
  case FN_STORE_SRC: return exec_check_read(s, w, pc, REF(s, in->a), "store source");
  case FN_COMPUTE: return exec_compute(s, w, pc);
  case FN_RED_SRC: {
    if (!exec_check_read(s, w, pc, REF(s, in->a), "RED source")) return FALSE;
    RedContrib c = {w->id, pc, exec_gather(s, w, REF(s, in->a))};
    g_array_append_val(s->red[in->event].fcontrib, c);
    return TRUE;
  }
  case FN_XFER: exec_transfer(s, a, pc); return TRUE;
  default: return TRUE;
  }
}

/* A functional action at the point the timing reaches it: applied now in
 * a full run, logged in a recording run (sim_time), skipped in a
 * timing-only run.  FALSE after sim_fail. */
static gboolean fn(Sim *s, FnKind kind, int a, int pc) {
  if (s->fnlog) {
    FnAct act = {kind, a, pc};
    g_array_append_val(s->fnlog, act);
    return TRUE;
  }
  return s->o->timing_only || fn_apply(s, kind, a, pc);
}

/* ---- events ---------------------------------------------------------- */

static void wake(Sim *s, int ev, int64_t t) {
  for (int i = 0; i < s->nwgs; i++) {
    Wg *w = &s->wg[i];
    if (w->state == WG_WAIT_EV && w->wait_ev == ev && s->ev_count[ev] >= w->wait_n) {
      w->state = WG_RUN;
      w->t = maxi(w->t, t);
      sim_push(s, w->t, EV_WG, w->id, 0);
    }
  }
}

/* Event `ev` counts n more at t; `clock` (or NULL) joins the event's clock
 * before any waiter wakes.  `snap`: the clock's snapshot (-1: the host's),
 * which tells --trace who sent it. */
static void signal_event(Sim *s, int ev, int64_t n, int64_t t, const int64_t *clock, int snap) {
  s->ev_count[ev] = add_sat(s->ev_count[ev], n); /* many SIGs may add up past int64 */
  if (s->tr) trace_sig_delivered(s->tr, ev, s->ev_count[ev], snap);
  if (clock) clock_join(s, s->ev_vc + (size_t)ev * (size_t)s->nwgs, clock);
  wake(s, ev, t);
}

/* D1 host: write input row `step` and bump ev.in. */
static void host_release(Sim *s, int step) {
  s->release_t[step] = s->now;
  fn(s, FN_HOST, step, 0);
  signal_event(s, 0, 1, s->now, s->host_vc, -1);
}

/* D1 host: count the output words a completed ST (of WG wg) wrote; a
 * completed row t releases input row t+1 T_HOST_LATENCY cycles later
 * (docs/machine.md §3).  The host's ev.in is ordered after the stores it
 * saw (their WGs' clocks). */
static void host_observe(Sim *s, int wg, const Insn *in) {
  if (!s->out_mark || in->op != OP_ST || in->space != MEM_HBM) return;
  clock_join(s, s->host_vc, clock_of(s, wg));
  uint64_t words = s->row_bytes / 4, out_end = s->out_addr + s->row_bytes * (uint64_t)s->steps;
  for (int i = 0; i < REF(s, in->a)->rows; i++) {
    uint64_t a = in->addr + 4ull * (uint64_t)i * (uint64_t)in->stride;
    uint64_t lo = MAX(a, s->out_addr), hi = MIN(a + 4ull * (uint64_t)REF(s, in->a)->cols, out_end);
    for (uint64_t x = lo; x < hi; x += 4) {
      uint64_t k = (x - s->out_addr) / 4;
      if (s->out_mark[k]) continue;
      s->out_mark[k] = 1;
      int row = (int)(k / words);
      if (++s->out_count[row] == (int)words && row + 1 < s->steps)
        sim_push(s, s->now + T_HOST_LATENCY, EV_HOST, row + 1, 0);
    }
  }
}

/* A transfer reading D1 input rows not yet released. */
static gboolean early_input(Sim *s, Wg *w, const Insn *in, int pc) {
  if (!s->release_t || in->op != OP_LD || in->space != MEM_HBM) return FALSE;
  uint64_t lo = s->x_in_addr, hi = lo + s->row_bytes * (uint64_t)s->steps;
  for (int i = 0; i < REF(s, in->d)->rows; i++) {
    uint64_t a = in->addr + 4ull * (uint64_t)i * (uint64_t)in->stride;
    uint64_t b = a + 4ull * (uint64_t)REF(s, in->d)->cols;
    if (b <= lo || a >= hi) continue;
    for (uint64_t row = (MAX(a, lo) - lo) / s->row_bytes; row * s->row_bytes + lo < MIN(b, hi); row++)
      if (s->release_t[row] > s->now) {
        sim_fail(s, w->id, pc, "read of D1 input row %d before its release (wait for ev.in >= %d)",
                 (int)row, (int)row + 1);
        return TRUE;
      }
  }
  return FALSE;
}

/* ---- RED ------------------------------------------------------------- */

/* Contributions in ascending WG order: the fixed summation order. */
static void red_sort(GArray *contrib) {
  RedContrib *c = (RedContrib *)contrib->data;
  for (guint i = 1; i < contrib->len; i++)
    for (guint j = i; j > 0 && c[j - 1].wg > c[j].wg; j--) {
      RedContrib t = c[j];
      c[j] = c[j - 1];
      c[j - 1] = t;
    }
}

/* FN_RED_DONE: every contributor's d receives the sum of the round's
 * contributions, added in ascending WG order. */
static void red_apply(Sim *s, int g) {
  GArray *fc = s->red[g].fcontrib;
  red_sort(fc);
  RedContrib *c = (RedContrib *)fc->data;
  int n = (int)fc->len;
  const Insn *in0 = &s->p->wgs[c[0].wg].insns[c[0].pc];
  long elems = (long)REF(s, in0->a)->rows * REF(s, in0->a)->cols;
  float *sum = g_new0(float, elems);
  for (int i = 0; i < n; i++)
    for (long e = 0; e < elems; e++) sum[e] = sum[e] + c[i].data[e];
  for (int i = 0; i < n; i++) {
    exec_scatter(s, &s->wg[c[i].wg], REF(s, s->p->wgs[c[i].wg].insns[c[i].pc].d), sum);
    g_free(c[i].data);
  }
  g_free(sum);
  g_array_set_size(fc, 0);
}

/* The round of group g completes: its last contribution was (wg, pc). */
static void red_complete(Sim *s, int g, int last_wg, int last_pc) {
  RedGroup *rg = &s->red[g];
  int n = (int)rg->contrib->len;
  red_sort(rg->contrib);
  RedContrib *c = (RedContrib *)rg->contrib->data;
  const Insn *in0 = &s->p->wgs[c[0].wg].insns[c[0].pc];
  long elems = (long)REF(s, in0->a)->rows * REF(s, in0->a)->cols;
  /* the sum leaves the unit and crosses each contributor's NoC in-link */
  int64_t ready = rg->unit_done + T_RED_LATENCY, done = ready;
  for (int i = 0; i < n; i++) {
    Wg *w = &s->wg[c[i].wg];
    done = maxi(done, dma_noc(s, &s->noc_in[w->sm], 4 * (uint64_t)elems, ready, c[i].wg, c[i].pc) + 1);
  }
  fn(s, FN_RED_DONE, g, 0);
  /* a round orders its contributors after one another */
  int64_t *joint = g_new0(int64_t, s->nwgs);
  for (int i = 0; i < n; i++) clock_join(s, joint, clock_of(s, c[i].wg));
  for (int i = 0; i < n; i++) clock_join(s, clock_of(s, c[i].wg), joint);
  for (int i = 0; i < n; i++) {
    Wg *w = &s->wg[c[i].wg];
    for (guint k = 0; k < w->inflight.len; k++) {
      Rec *r = &w->inflight.v[k];
      if (r->red == g && r->done == T_INF) r->done = done;
    }
    w->pending_red--;
    w->last_done = maxi(w->last_done, done);
  }
  g_array_set_size(rg->contrib, 0);
  rg->n = 0;
  /* results are written now (functional) but usable from `done` on */
  push_sig(s, done, g, 1, joint, last_wg, last_pc);
  g_free(joint);
  for (int i = 0; i < s->nwgs; i++)
    if (s->wg[i].state == WG_BLOCK_RED) {
      s->wg[i].state = WG_RUN;
      sim_push(s, maxi(s->wg[i].t, s->now), EV_WG, i, 0);
    }
}

static gboolean red_issue(Sim *s, Wg *w, const Insn *in, int pc, int64_t t) {
  RedGroup *rg = &s->red[in->event];
  const char *name = g_ptr_array_index(s->p->events, in->event);
  if (rg->n == 0) {
    rg->n = in->n;
  } else if (rg->n != in->n) {
    sim_fail(s, w->id, pc, "RED group ev.%s: this contribution expects %" G_GINT64_FORMAT
             " contributors but the round in progress expects %" G_GINT64_FORMAT, name, in->n, rg->n);
    return FALSE;
  }
  for (guint i = 0; i < rg->contrib->len; i++)
    if (g_array_index(rg->contrib, RedContrib, i).wg == w->id) {
      sim_fail(s, w->id, pc, "RED group ev.%s: wg%d contributes twice to one round", name, w->id);
      return FALSE;
    }
  /* every contribution of a round has the shape of the first (red_complete
   * sums and scatters that many elements for every contributor) */
  if (rg->contrib->len > 0) {
    const RedContrib *c0 = &g_array_index(rg->contrib, RedContrib, 0);
    const Insn *in0 = &s->p->wgs[c0->wg].insns[c0->pc];
    const RfRef *mine[2] = {REF(s, in->a), REF(s, in->d)}, *first[2] = {REF(s, in0->a), REF(s, in0->d)};
    static const char *const what[2] = {"s", "d"};
    for (int k = 0; k < 2; k++)
      if (mine[k]->rows != first[k]->rows || mine[k]->cols != first[k]->cols) {
        g_autofree char *a = sim_rfref_str(s->p, mine[k]), *b = sim_rfref_str(s->p, first[k]);
        sim_fail(s, w->id, pc, "RED group ev.%s: shape mismatch: %s %s is %dx%d but %s %s of the "
                 "round in progress (line %d) is %dx%d (every contribution to a round must have "
                 "the same shape)", name, what[k], a, mine[k]->rows, mine[k]->cols, what[k], b,
                 in0->line, first[k]->rows, first[k]->cols);
        return FALSE;
      }
  }
  if (!fn(s, FN_RED_SRC, w->id, pc)) return FALSE;
  /* the contribution crosses this SM's NoC out-link; the round's unit (the
   * earliest free when the round starts) adds it as it arrives */
  long elems = (long)REF(s, in->a)->rows * REF(s, in->a)->cols;
  int64_t arrive = dma_noc(s, &s->noc_out[w->sm], 4 * (uint64_t)elems, t, w->id, pc);
  if (rg->contrib->len == 0) {
    rg->unit = 0;
    for (int k = 1; k < s->m->reduce_units; k++)
      if (s->red_free[k] < s->red_free[rg->unit]) rg->unit = k;
    rg->unit_done = 0;
  }
  int64_t dur = (elems + RED_FLOATS - 1) / RED_FLOATS;
  int64_t st = maxi(arrive, s->red_free[rg->unit]);
  s->red_free[rg->unit] = st + dur;
  rg->unit_done = maxi(rg->unit_done, st + dur);
  s->uc_busy[UC_RED] += (double)dur;
  sim_energy(s, UC_RED, st, dur, EU_RED_ELEM * (SimEnergy)elems, w->id, pc);
  RedContrib c = {w->id, pc, NULL};
  g_array_append_val(rg->contrib, c);
  Range r = sim_range(s, REF(s, in->a));
  track(s, &w->inflight, &r, FALSE, arrive, -1, -1, pc);
  r = sim_range(s, REF(s, in->d));
  track(s, &w->inflight, &r, TRUE, T_INF, in->event, -1, pc);
  w->pending_red++;
  if ((int64_t)rg->contrib->len == rg->n) red_complete(s, in->event, w->id, pc);
  return TRUE;
}

/* ---- compute units --------------------------------------------------- */

static int64_t unit_cycles(const Sim *s, const Insn *in) {
  const Machine *m = s->m;
  switch (sim_op_unit[in->op]) {
  case UNIT_MMA: {
    int64_t M = REF(s, in->d)->rows, N = REF(s, in->d)->cols, K = REF(s, in->a)->cols;
    return T_MMA_BLOCK * ((M + 31) / 32) * ((N + 31) / 32) * ((K + 31) / 32);
  }
  case UNIT_VEC: {
    int64_t e = REFI(s, sim_op_form[in->op] == F_ROW ? in->a : in->d)->elems;
    int64_t c = (e + m->vl - 1) / m->vl;
    if (sim_op_form[in->op] == F_ROW) c += s->log2_vl;
    return c > 0 ? c : 1;
  }
  case UNIT_SFU: {
    int64_t e = REFI(s, in->d)->elems, c = (e + m->sfu - 1) / m->sfu;
    return c > 0 ? c : 1;
  }
  default: return 1;
  }
}

/* Start a compute instruction: first cycle >= t where its unit and the RF
 * ports of every partition it reads/writes are free for its whole duration. */
static int64_t compute_issue(Sim *s, Wg *w, const Insn *in, int pc, int64_t t) {
  int64_t dur = unit_cycles(s, in), *unit;
  int u = 0;
  if (in->op == OP_MMA) {
    int64_t *arr = &s->mma_free[(long)w->sm * s->m->mma_arrays];
    for (int k = 1; k < s->m->mma_arrays; k++)
      if (arr[k] < arr[u]) u = k;
    unit = &arr[u];
  } else if (sim_op_unit[in->op] == UNIT_VEC) {
    unit = &s->vec_free[w->id];
  } else {
    unit = &s->sfu_free[w->sm];
  }
  const RefInfo *dst = REFI(s, in->d);
  uint64_t rd = 0, wr = dst->parts;
  const RefInfo *src[3] = {REFI(s, in->a), REFI(s, in->b), REFI(s, in->c)};
  for (int k = 0; k < 3; k++) rd |= src[k]->parts; /* 0 for the absent operand */
  if (in->op == OP_MMA && !(in->mods & MOD_Z)) rd |= wr;
  Cal *rp = &s->rf_rd[(long)w->id * s->vl], *wp = &s->rf_wr[(long)w->id * s->vl];
  int64_t st = maxi(t, *unit);
  /* the ports touched, in ascending partition order (set bits only) */
  for (gboolean moved = TRUE; moved;) {
    moved = FALSE;
    for (uint64_t m = rd | wr; m; m &= m - 1) {
      int p = __builtin_ctzll(m);
      int64_t a = st;
      if (rd >> p & 1) a = cal_fit(&rp[p], a, dur);
      if (wr >> p & 1) a = cal_fit(&wp[p], a, dur);
      if (a != st) {
        st = a;
        moved = TRUE;
      }
    }
  }
  int nports = 0;
  for (uint64_t m = rd | wr; m; m &= m - 1) {
    int p = __builtin_ctzll(m);
    if (rd >> p & 1) cal_take(&rp[p], st, dur), nports++;
    if (wr >> p & 1) cal_take(&wp[p], st, dur), nports++;
  }
  *unit = st + dur;
  /* energy: the unit's work plus every RF byte it moves */
  int64_t rf_bytes = dst->bytes;
  for (int k = 0; k < 3; k++)
    if (src[k]->rg.region >= 0) rf_bytes += src[k]->bytes;
  switch (sim_op_unit[in->op]) {
  case UNIT_MMA:
    if (s->tr) trace_unit(s->tr->mma, w->sm * s->m->mma_arrays + u, st, st + dur, w->id, pc);
    s->mma_blocks += dur / T_MMA_BLOCK;
    if (!(in->mods & MOD_Z)) rf_bytes += dst->bytes;
    sim_energy(s, UC_MMA, st, dur, EU_MMA_BLOCK * (dur / T_MMA_BLOCK), w->id, pc);
    s->uc_busy[UC_MMA] += (double)dur;
    break;
  case UNIT_VEC:
    sim_energy(s, UC_VEC, st, dur,
               EU_VEC_ELEM * (sim_op_form[in->op] == F_ROW ? REFI(s, in->a)->elems : REFI(s, in->d)->elems),
               w->id, pc);
    s->uc_busy[UC_VEC] += (double)dur;
    break;
  default:
    sim_energy(s, UC_SFU, st, dur, EU_SFU_ELEM * REFI(s, in->d)->elems, w->id, pc);
    s->uc_busy[UC_SFU] += (double)dur;
    break;
  }
  sim_energy(s, UC_RF, st, dur, EU_RF_BYTE * rf_bytes, w->id, pc);
  s->uc_busy[UC_RF] += (double)(dur * nports);
  return st + dur;
}

/* ---- DMA issue ------------------------------------------------------- */

/* Returns the completion time, or -(time a slot frees) when all are busy. */
static int64_t dma_issue(Sim *s, Wg *w, const Insn *in, int pc, int64_t t) {
  int nslots = s->m->dma_engines * s->m->dma_depth;
  int64_t *slot = &s->slot_free[(long)w->sm * nslots];
  int64_t *req = &s->req_free[(long)w->sm * s->m->dma_engines];
  int k = 0;
  for (int i = 1; i < nslots; i++)
    if (slot[i] < slot[k]) k = i;
  if (slot[k] > t) return -slot[k];
  /* among the free slots, the one whose engine can issue requests first */
  for (int i = 0; i < nslots; i++)
    if (slot[i] <= t && req[i / s->m->dma_depth] < req[k / s->m->dma_depth]) k = i;
  int64_t done = dma_schedule(s, w, in, t, k / s->m->dma_depth);
  slot[k] = done;
  /* the completion copies the data */
  int xi;
  if (s->xfer_free->len) {
    xi = g_array_index(s->xfer_free, int, s->xfer_free->len - 1);
    g_array_set_size(s->xfer_free, s->xfer_free->len - 1);
  } else {
    xi = (int)s->xfers->len;
    g_array_set_size(s->xfers, s->xfers->len + 1);
  }
  Xfer x = {w->id, pc, done};
  g_array_index(s->xfers, Xfer, xi) = x;
  sim_push(s, done, EV_XFER, xi, 0);
  /* hazards: own ranges; remote destinations become incoming records */
  if (in->op == OP_LD) {
    if (in->mods & MOD_MC) {
      for (int i = 0; i < sim_insn_ntargets(in); i++) {
        RfRef r = *REF(s, in->d);
        r.region = sim_insn_tregion(in, i);
        Range rg = sim_range(s, &r);
        Wg *tw = &s->wg[in->targets[i]];
        track(s, tw == w ? &w->inflight : &tw->incoming, &rg, TRUE, done, -1, w->id, pc);
      }
    } else {
      track(s, &w->inflight, &REFI(s, in->d)->rg, TRUE, done, -1, -1, pc);
    }
  } else {
    track(s, &w->inflight, &REFI(s, in->a)->rg, FALSE, done, -1, -1, pc);
    if (in->space == MEM_RF) {
      Range rg = REFI(s, in->dst)->rg;
      const Region *g = g_ptr_array_index(s->p->regions, REF(s, in->dst)->region);
      Wg *tw = &s->wg[g->wg];
      track(s, tw == w ? &w->inflight : &tw->incoming, &rg, TRUE, done, -1, w->id, pc);
    }
  }
  return done;
}

/* ---- issue ----------------------------------------------------------- */

gboolean sim_hazard_cache = TRUE;

/* Try to issue insns[pc] at time t.  Returns the time the WG may try again
 * (t+1 after an issue), or -1 when it parked itself (WAIT, RED, END). */
static int64_t issue_one(Sim *s, Wg *w, int64_t t) {
  int pc = w->pc;
  const Insn *in = &w->code->insns[pc];
  if (pc + 1 < w->code->n) { /* the WG's next instruction, all its cache lines */
    const char *nx = (const char *)&w->code->insns[pc + 1];
    for (size_t b = 0; b < sizeof(Insn) + 63; b += 64) __builtin_prefetch(nx + b);
  }
  prune(&w->inflight, t);
  if (w->acc_pc != pc) {
    access_of(s, w, in, &w->acc);
    w->acc_pc = pc;
  }
  const Access *acc = &w->acc;
  /* an instruction tried again after a hazard stall (or a busy DMA slot)
   * is clear from clear_t on: its WG's records change only when it issues
   * (red_complete finishes records that made hazard() T_INF, never cached) */
  int64_t h = sim_hazard_cache && w->clear_pc == pc && t >= w->clear_t ? t : hazard(w, acc, t);
  if (h != T_INF) {
    w->clear_pc = pc;
    w->clear_t = h;
  }
  if (h == T_INF || ((in->op == OP_SIG || in->op == OP_END) && w->pending_red > 0)) {
    w->state = WG_BLOCK_RED;
    return -1;
  }
  if (h > t) return h;
  if (race(s, w, in, pc, acc, t)) return -1;
  int64_t done = t + 1, next = t + T_ISSUE;
  switch (in->op) {
  case OP_WAIT:
    if (s->ev_count[in->event] < in->n) {
      w->state = WG_WAIT_EV;
      w->wait_ev = in->event;
      w->wait_n = in->n;
      return -1;
    }
    clock_join(s, clock_of(s, w->id), s->ev_vc + (size_t)in->event * (size_t)s->nwgs);
    if (s->tr) trace_wait_passed(s->tr, in->event, in->n, w->id, pc);
    break;
  case OP_WAITT:
    next = add_sat(t, in->n > 1 ? in->n : 1);
    break;
  case OP_SIG:
    push_sig(s, maxi(t, w->last_done) + T_SIG_LATENCY, in->event, in->n, clock_of(s, w->id), w->id, pc);
    clock_of(s, w->id)[w->id]++; /* a new epoch: what follows is not ordered by this SIG */
    break;
  case OP_END:
    w->state = WG_DONE;
    w->end = maxi(t + 1, w->last_done);
    s->max_t = maxi(s->max_t, w->end);
    s->insns++;
    if (s->iissue) s->iissue[s->insn_base[w->id] + pc] = t;
    if (s->tr) trace_insn(s->tr, w->id, pc, t, w->end);
    return -1;
  case OP_RED:
    if (!red_issue(s, w, in, pc, t)) return -1;
    done = t + 1;
    break;
  case OP_LD:
  case OP_ST:
    if (early_input(s, w, in, pc) || remote_races(s, w, in, pc, t)) return -1;
    if (in->op == OP_ST && !fn(s, FN_STORE_SRC, w->id, pc)) return -1;
    done = dma_issue(s, w, in, pc, t);
    if (done < 0) return -done; /* every DMA slot busy: stall issue */
    break;
  default: {
    done = compute_issue(s, w, in, pc, t);
    if (!fn(s, FN_COMPUTE, w->id, pc)) return -1;
    for (int k = 0; k < acc->n; k++) track(s, &w->inflight, &acc->rg[k], acc->wr[k], done, -1, -1, pc);
    break;
  }
  }
  for (int k = 0; k < acc->n; k++)
    if (s->remote[acc->rg[k].region]) note_access(s, w, &acc->rg[k], acc->wr[k], pc, t);
  w->last_done = maxi(w->last_done, done);
  if (s->iissue) s->iissue[s->insn_base[w->id] + pc] = t;
  if (s->tr) trace_insn(s->tr, w->id, pc, t, done);
  w->pc++;
  s->insns++;
  return next;
}

/* Issue from WG w until it parks, stalls past the next queued event, or fails. */
static void run_wg(Sim *s, Wg *w) {
  int64_t t = s->now;
  for (;;) {
    int64_t next = issue_one(s, w, t);
    if (next < 0 || s->err) return;
    w->t = next;
    if (next > s->o->max_cycles) {
      sim_fail(s, w->id, w->pc,
               "cycle limit of %" G_GINT64_FORMAT " cycles exceeded (this instruction would issue "
               "at cycle %" G_GINT64_FORMAT "; see --max-cycles)", s->o->max_cycles, next);
      return;
    }
    if (evq_min_t(&s->q) <= next) {
      sim_push(s, next, EV_WG, w->id, 0);
      return;
    }
    s->now = t = next;
  }
}

/* ---- set-up and tear-down -------------------------------------------- */


/* Which regions other WGs write into (ST wgN.d, LD.mc targets), with the
 * regions of the same WG that share bytes with them. */
static void find_remote(Sim *s) {
  const Program *p = s->p;
  guint nreg = p->regions->len;
  s->remote = g_new0(uint8_t, nreg);
  /* the assembler's list of the instructions that may (its fixups), not
   * every instruction of the program */
  for (guint i = 0; i < p->xwg->len; i++) {
    const SimXwg *x = &g_array_index(p->xwg, SimXwg, i);
    const Insn *in = &p->insn_block[x->at];
    int w = x->wg;
    if (in->op == OP_ST && in->space == MEM_RF &&
        ((const Region *)g_ptr_array_index(p->regions, REF(s, in->dst)->region))->wg != w)
      s->remote[REF(s, in->dst)->region] = 1;
    if (in->op == OP_LD && (in->mods & MOD_MC))
      for (int k = 0; k < sim_insn_ntargets(in); k++)
        if (in->targets[k] != w) s->remote[sim_insn_tregion(in, k)] = 1;
  }
  /* each WG's regions (counting sort by WG): a remote region is compared
   * with its own WG's regions only, not with every region of the program */
  int *first = g_new0(int, s->nwgs + 1), *fill = g_new(int, s->nwgs), *byw = g_new(int, nreg);
  for (guint i = 0; i < nreg; i++) first[s->geo[i].wg + 1]++;
  for (int w = 0; w < s->nwgs; w++) first[w + 1] += first[w];
  memcpy(fill, first, sizeof(int) * (size_t)s->nwgs);
  for (guint i = 0; i < nreg; i++) byw[fill[s->geo[i].wg]++] = (int)i;
  for (guint i = 0; i < nreg; i++) {
    if (s->remote[i] != 1) continue;
    const Region *a = g_ptr_array_index(p->regions, i);
    uint32_t alo = a->byte, ahi = a->byte + 4u * (uint32_t)(a->rows * a->cols);
    for (int k = first[a->wg]; k < first[a->wg + 1]; k++) {
      int j = byw[k];
      const Region *b = g_ptr_array_index(p->regions, j);
      uint32_t blo = b->byte, bhi = b->byte + 4u * (uint32_t)(b->rows * b->cols);
      if (!s->remote[j] && blo < ahi && alo < bhi) s->remote[j] = 2;
    }
  }
  g_free(first);
  g_free(fill);
  g_free(byw);
}

/* Every WG at epoch 1, ordered after nothing. */
static void init_clocks(Sim *s) {
  size_t n = (size_t)s->nwgs;
  s->vc = g_new0(int64_t, n * n);
  for (size_t w = 0; w < n; w++) s->vc[w * n + w] = 1;
  s->ev_vc = g_new0(int64_t, (size_t)s->nevents * n);
  s->host_vc = g_new0(int64_t, n);
  s->snaps = g_array_new(FALSE, FALSE, (guint)(sizeof(int64_t) * n));
  s->snap_free = g_array_new(FALSE, FALSE, sizeof(int));
  find_remote(s);
}

static void sim_init(Sim *s, const Program *p, const SimOptions *o) {
  memset(s, 0, sizeof *s);
  s->p = p;
  s->o = o;
  s->m = &p->hw;
  s->refs = p->refs;
  const Machine *m = s->m;
  evq_init(&s->q);
  s->nwgs = sim_machine_wgs(m);
  s->vl = m->vl;
  s->part_bytes = sim_machine_part_bytes(m);
  s->rf_words = m->rf_kib * 256;
  s->log2_vl = (int64_t)log2(m->vl);
  s->part_shift = s->part_bytes & (s->part_bytes - 1) ? -1 : __builtin_ctz((unsigned)s->part_bytes);
  s->chan_mask = m->hbm_channels & (m->hbm_channels - 1) ? -1 : m->hbm_channels - 1;
  int64_t bpc = m->noc_bits / 8;
  s->noc_k = bpc > HBM_LINE ? bpc / HBM_LINE : 1;
  s->noc_slot = bpc / s->noc_k;
  s->geo = g_new0(Geo, p->regions->len);
  for (guint i = 0; i < p->regions->len; i++) {
    const Region *g = g_ptr_array_index(p->regions, i);
    uint32_t pb = (uint32_t)s->part_bytes, end = g->byte + 4u * (uint32_t)(g->rows * g->cols);
    gboolean one = g->byte / pb == (end - 1) / pb; /* inside one partition */
    Geo x = {g->byte, g->cols, g->wg, 0, one ? 1ull << (g->byte / pb) : 0};
    s->geo[i] = x;
  }
  s->ri = g_new0(RefInfo, p->nrefs);
  for (uint32_t i = 0; i < p->nrefs; i++) {
    const RfRef *r = &p->refs[i];
    RefInfo *x = &s->ri[i];
    x->rg.region = -1;
    if (r->region < 0) continue;
    x->rg = sim_range(s, r);
    x->elems = (int64_t)r->rows * r->cols;
    x->bytes = 4 * (int64_t)r->rows * r->cols;
    x->parts = sim_parts(s, r);
  }
  s->hbm_words = p->abi.hbm_bytes / 4;
  if (!o->timing_only) {
    s->hbm = g_new(float, s->hbm_words);
    sim_huge_hint(s->hbm, s->hbm_words * sizeof(float));
    wl_init_hbm(&p->prob, &p->abi, o->seed, s->hbm);
  }
  if (m->sh_kib > 0) {
    s->sh = g_new0(float *, m->sms);
    for (int i = 0; i < m->sms; i++) s->sh[i] = g_new0(float, (size_t)m->sh_kib * 256);
  }
  s->wg = g_new0(Wg, s->nwgs);
  s->insn_base = g_new0(int, s->nwgs + 1);
  for (int i = 0; i < s->nwgs; i++) {
    Wg *w = &s->wg[i];
    w->id = i;
    w->sm = i / m->wgs_per_sm;
    w->code = &p->wgs[i];
    w->acc_pc = -1;
    w->clear_pc = -1;
    w->state = w->code->n > 0 ? WG_RUN : WG_IDLE;
    w->accesses = g_array_new(FALSE, FALSE, sizeof(Access1));
    if (w->code->n > 0 && !o->timing_only) {
      w->rf = g_new0(float, s->rf_words);
      w->valid = g_new0(uint8_t, s->rf_words);
    }
    s->insn_base[i + 1] = s->insn_base[i] + w->code->n;
  }
  int nch = m->hbm_channels, nports = s->nwgs * s->vl;
  s->chan = g_new0(Cal, nch);
  s->noc_in = g_new0(Cal, m->sms);
  s->noc_out = g_new0(Cal, m->sms);
  s->sh_port = g_new0(Cal, m->sms);
  s->rf_rd = g_new0(Cal, nports);
  s->rf_wr = g_new0(Cal, nports);
  Cal *cals[] = {s->chan, s->noc_in, s->noc_out, s->sh_port, s->rf_rd, s->rf_wr};
  int ncal[] = {nch, m->sms, m->sms, m->sms, nports, nports};
  for (int k = 0; k < 6; k++)
    for (int i = 0; i < ncal[k]; i++) cal_init(&cals[k][i], &s->now);
  s->mma_free = g_new0(int64_t, m->sms * m->mma_arrays);
  s->vec_free = g_new0(int64_t, s->nwgs);
  s->sfu_free = g_new0(int64_t, m->sms);
  s->red_free = g_new0(int64_t, m->reduce_units + 1);
  s->slot_free = g_new0(int64_t, m->sms * m->dma_engines * m->dma_depth);
  s->req_free = g_new0(int64_t, m->sms * m->dma_engines);
  s->nevents = (int)p->events->len;
  s->ev_count = g_new0(int64_t, s->nevents);
  s->red = g_new0(RedGroup, s->nevents);
  for (int i = 0; i < s->nevents; i++) {
    s->red[i].contrib = g_array_new(FALSE, FALSE, sizeof(RedContrib));
    s->red[i].fcontrib = g_array_new(FALSE, FALSE, sizeof(RedContrib));
  }
  s->xfers = g_array_new(FALSE, FALSE, sizeof(Xfer));
  s->xfer_free = g_array_new(FALSE, FALSE, sizeof(int));
  init_clocks(s);
  s->dp_cap = 4096;
  s->dp = g_new0(SimEnergy, s->dp_cap);
  s->pw_cap = 256;
  s->pw_t = g_new(int64_t, s->pw_cap);
  s->pw_v = g_new(SimEnergy, s->pw_cap);
  s->pw_n = 1; /* power 0 from cycle 0 */
  s->pw_t[0] = 0;
  s->pw_v[0] = 0;
  if (o->trace) s->tr = trace_new(p);
  if (o->profile || o->trace) { /* per-instruction energy and active span */
    int n = s->insn_base[s->nwgs];
    s->ie = g_new0(SimEnergy, n);
    s->istart = g_new(int64_t, n);
    s->iend = g_new0(int64_t, n);
    for (int i = 0; i < n; i++) s->istart[i] = T_INF;
  }
  if (o->profile) { /* per-instruction issue cycle: the stages (stages.c) */
    int n = s->insn_base[s->nwgs];
    s->iissue = g_new(int64_t, n);
    for (int i = 0; i < n; i++) s->iissue[i] = -1;
    s->ilines = g_new0(int64_t, n);
  }
  if (p->prob.kind == PROB_D1) {
    const AbiSym *x = wl_abi_lookup(&p->abi, "x_in"), *out = wl_abi_lookup(&p->abi, "out");
    s->steps = p->prob.steps;
    s->row_bytes = 4ull * (uint64_t)p->prob.d_model;
    s->x_in_addr = x->addr;
    s->out_addr = out->addr;
    s->release_t = g_new(int64_t, s->steps);
    for (int i = 0; i < s->steps; i++) s->release_t[i] = T_INF;
    s->out_mark = g_new0(uint8_t, (size_t)s->steps * p->prob.d_model);
    s->out_count = g_new0(int, s->steps);
    sim_push(s, T_HOST_LATENCY, EV_HOST, 0, 0);
  } else {
    s->ev_count[0] = 1; /* P1: inputs present from the start */
  }
  for (int i = 0; i < s->nwgs; i++)
    if (s->wg[i].state == WG_RUN) sim_push(s, 0, EV_WG, i, 0);
}

static void sim_destroy(Sim *s) {
  const Machine *m = s->m;
  g_free(s->hbm);
  if (s->sh)
    for (int i = 0; i < m->sms; i++) g_free(s->sh[i]);
  g_free(s->sh);
  for (int i = 0; i < s->nwgs; i++) {
    g_free(s->wg[i].inflight.v);
    g_free(s->wg[i].incoming.v);
    g_array_free(s->wg[i].accesses, TRUE);
    g_free(s->wg[i].rf);
    g_free(s->wg[i].valid);
  }
  g_free(s->wg);
  g_free(s->geo);
  g_free(s->ri);
  Cal *cals[] = {s->chan, s->noc_in, s->noc_out, s->sh_port, s->rf_rd, s->rf_wr};
  int ncal[] = {m->hbm_channels, m->sms, m->sms, m->sms, s->nwgs * s->vl, s->nwgs * s->vl};
  for (int k = 0; k < 6; k++) {
    for (int i = 0; i < ncal[k]; i++) cal_free(&cals[k][i]);
    g_free(cals[k]);
  }
  g_free(s->mma_free);
  g_free(s->vec_free);
  g_free(s->sfu_free);
  g_free(s->red_free);
  g_free(s->slot_free);
  g_free(s->req_free);
  for (int i = 0; i < s->nevents; i++) {
    RedGroup *rg = &s->red[i];
    for (guint k = 0; k < rg->fcontrib->len; k++) g_free(g_array_index(rg->fcontrib, RedContrib, k).data);
    g_array_free(rg->contrib, TRUE);
    g_array_free(rg->fcontrib, TRUE);
  }
  g_free(s->red);
  g_free(s->ev_count);
  g_array_free(s->xfers, TRUE);
  g_array_free(s->xfer_free, TRUE);
  g_free(s->vc);
  g_free(s->ev_vc);
  g_free(s->host_vc);
  g_array_free(s->snaps, TRUE);
  g_array_free(s->snap_free, TRUE);
  g_free(s->remote);
  evq_free(&s->q);
  g_free(s->dp);
  g_free(s->pw_t);
  g_free(s->pw_v);
  g_free(s->insn_base);
  g_free(s->ie);
  g_free(s->istart);
  g_free(s->iend);
  g_free(s->iissue);
  g_free(s->ilines);
  g_free(s->release_t);
  g_free(s->out_mark);
  g_free(s->out_count);
  g_free(s->tmp[0]);
  g_free(s->tmp[1]);
  trace_free(s->tr);
  if (s->err) g_error_free(s->err);
}

/* No request starts before the clock: drop what lies behind it. */
static void prune_calendars(Sim *s) {
  const Machine *m = s->m;
  Cal *cals[] = {s->chan, s->noc_in, s->noc_out, s->sh_port, s->rf_rd, s->rf_wr};
  int ncal[] = {m->hbm_channels, m->sms, m->sms, m->sms, s->nwgs * s->vl, s->nwgs * s->vl};
  for (int k = 0; k < 6; k++)
    for (int i = 0; i < ncal[k]; i++) cal_prune(&cals[k][i], s->now);
}

/* Every WG that has not ended is blocked: name each and what it waits for. */
static void deadlock(Sim *s) {
  g_autoptr(GString) msg = g_string_new("deadlock:");
  int first = -1;
  for (int i = 0; i < s->nwgs; i++) {
    Wg *w = &s->wg[i];
    if (w->state == WG_IDLE || w->state == WG_DONE) continue;
    if (first < 0) first = i;
    const Insn *in = &w->code->insns[w->pc];
    if (w->state == WG_WAIT_EV)
      g_string_append_printf(msg, " wg%d waits for ev.%s >= %" G_GINT64_FORMAT " (is %" G_GINT64_FORMAT ") at line %d;",
                             i, (char *)g_ptr_array_index(s->p->events, w->wait_ev), w->wait_n,
                             s->ev_count[w->wait_ev], in->line);
    else {
      int g = -1;
      for (guint k = 0; k < w->inflight.len && g < 0; k++) g = w->inflight.v[k].red;
      if (g < 0) g = 0;
      g_string_append_printf(msg, " wg%d waits for RED round ev.%s (%u of %" G_GINT64_FORMAT
                             " contributions) at line %d;", i, (char *)g_ptr_array_index(s->p->events, g),
                             s->red[g].contrib->len, s->red[g].n, in->line);
    }
  }
  if (first < 0) return;
  g_string_truncate(msg, msg->len - 1);
  sim_fail(s, first, s->wg[first].pc, "%s", msg->str);
}

static void hot_window(Sim *s, SimResult *res) {
  int n = s->insn_base[s->nwgs];
  int64_t ws = res->peak_start, we = ws + POWER_WINDOW;
  GArray *hot = g_array_new(FALSE, FALSE, sizeof(HotInsn));
  for (int w = 0; w < s->nwgs; w++)
    for (int pc = 0; pc < s->wg[w].code->n; pc++) {
      int k = s->insn_base[w] + pc;
      if (k >= n || s->ie[k] <= 0 || s->iend[k] <= ws || s->istart[k] >= we) continue;
      /* ie * in / span, rounded to the nearest unit (halves up) */
      int64_t span = s->iend[k] - s->istart[k], in = MIN(we, s->iend[k]) - MAX(ws, s->istart[k]);
      SimEnergySum x = (SimEnergySum)s->ie[k] * in;
      HotInsn h = {w, pc, (SimEnergy)((2 * x + span) / (2 * span))};
      g_array_append_val(hot, h);
    }
  /* largest energy first; ties by WG, then pc: a stable order */
  HotInsn *a = (HotInsn *)hot->data;
  for (guint i = 1; i < hot->len; i++)
    for (guint j = i; j > 0; j--) {
      gboolean sw = a[j].energy > a[j - 1].energy ||
                    (a[j].energy == a[j - 1].energy &&
                     (a[j].wg < a[j - 1].wg || (a[j].wg == a[j - 1].wg && a[j].pc < a[j - 1].pc)));
      if (!sw) break;
      HotInsn t = a[j];
      a[j] = a[j - 1];
      a[j - 1] = t;
    }
  res->nhot = (int)hot->len;
  res->hot = (HotInsn *)g_array_free(hot, FALSE);
}

/* Hand the recorded timeline to the result, with what only the end of the
 * run knows: each instruction's energy and first action, the power runs. */
static void trace_end(Sim *s, SimResult *res) {
  SimTrace *t = s->tr;
  int n = s->insn_base[s->nwgs];
  for (int k = 0; k < n; k++) {
    t->energy[k] = s->ie[k];
    t->start[k] = s->istart[k] == T_INF ? -1 : s->istart[k];
  }
  t->cycles = res->cycles;
  t->static_w = res->static_w;
  t->peak_w = res->peak_w;
  t->peak_start = res->peak_start;
  t->pw_n = s->pw_n;
  t->pw_t = g_memdup2(s->pw_t, sizeof(int64_t) * s->pw_n);
  t->pw_v = g_memdup2(s->pw_v, sizeof(SimEnergy) * s->pw_n);
  res->trace = t;
  s->tr = NULL;
}

static void finish(Sim *s, SimResult *res) {
  const Machine *m = s->m;
  int64_t cyc = 0;
  for (int i = 0; i < s->nwgs; i++)
    if (s->wg[i].state == WG_DONE) cyc = maxi(cyc, s->wg[i].end);
  res->cycles = cyc;
  res->area_mm2 = sim_machine_area(m);
  res->static_w = sim_machine_static_w(m);
  /* per-cycle dynamic energy: the runs, once the rest of the difference
   * array is folded in (fixed order) */
  trace_fold(s, maxi(s->dp_base, s->max_t + 1));
  res->peak_e = sim_peak_window_runs(s->pw_t, s->pw_v, s->pw_n, cyc, POWER_WINDOW, &res->peak_start);
  res->peak_w = sim_e_w(res->peak_e, POWER_WINDOW) + res->static_w;
  res->dyn_e = 0;
  for (int u = 0; u < UC__COUNT; u++) {
    res->unit_e[u] = s->uc_energy[u];
    res->unit_energy_uj[u] = sim_e_uj(s->uc_energy[u]);
    res->dyn_e += s->uc_energy[u];
  }
  res->energy_uj = sim_e_uj(res->dyn_e) + res->static_w * (double)cyc * 1e-3;
  double c = cyc > 0 ? (double)cyc : 1.0;
  double cap[UC__COUNT] = {
      [UC_MMA] = (double)m->sms * m->mma_arrays, [UC_VEC] = s->nwgs, [UC_SFU] = m->sms,
      [UC_RED] = m->reduce_units, [UC_DMA] = (double)m->sms * m->dma_engines,
      [UC_HBM] = m->hbm_channels, [UC_NOC] = 2.0 * m->sms, [UC_SH] = m->sh_kib ? m->sms : 0,
      [UC_RF] = 2.0 * s->nwgs * s->vl};
  for (int u = 0; u < UC__COUNT; u++)
    res->unit_busy[u] = cap[u] > 0 ? MIN(1.0, s->uc_busy[u] / (cap[u] * c)) : 0.0;
  res->insns = s->insns;
  res->mma_blocks = s->mma_blocks;
  res->hbm_lines = s->hbm_lines;
  if (!s->o->timing_only) {
    wl_check(&s->p->prob, &s->p->abi, s->o->seed, s->hbm, &res->check);
    res->checked = TRUE;
  }
  if (s->ie) hot_window(s, res);
  if (s->iissue) {
    SimInsnRecords rec = {s->insn_base, s->iissue, s->iend, s->ie, s->ilines};
    SimInsnStages is;
    sim_insn_stages(s->p, &rec, &is);
    res->stages = sim_stages(s->p, &rec, &is, &res->nstages);
    res->waits = sim_waits(s->p, &rec, &is, &res->nwaits);
    sim_insn_stages_clear(&is);
  }
  if (s->tr) trace_end(s, res);
  if (s->o->keep_hbm && s->hbm) {
    res->hbm = s->hbm;
    s->hbm = NULL;
  }
}

/* Run the event loop to its end; the run's error (a run-time error, a
 * deadlock, the cycle limit) is left in s->err. */
static void run(Sim *s) {
  const SimOptions *opt = s->o;
  for (uint64_t pops = 1; !evq_empty(&s->q) && !s->err; pops++) {
    Event e = evq_pop(&s->q);
    s->now = e.t;
    if ((pops & 0xfff) == 0) prune_calendars(s);
    switch (e.type) {
    case EV_XFER: {
      Xfer x = g_array_index(s->xfers, Xfer, e.a);
      fn(s, FN_XFER, x.wg, x.pc);
      host_observe(s, x.wg, &s->p->wgs[x.wg].insns[x.pc]);
      g_array_append_val(s->xfer_free, e.a);
      break;
    }
    case EV_SIG:
      signal_event(s, e.a, e.n, e.t, e.snap >= 0 ? snap_at(s, e.snap) : NULL, e.snap);
      if (e.snap >= 0) g_array_append_val(s->snap_free, e.snap);
      break;
    case EV_HOST: host_release(s, e.a); break;
    case EV_WG:
      if (s->wg[e.a].state == WG_RUN) run_wg(s, &s->wg[e.a]);
      break;
    }
  }
  if (!s->err) deadlock(s);
  /* work that completes past the limit (a long transfer before END) */
  for (int i = 0; i < s->nwgs && !s->err; i++)
    if (s->wg[i].state == WG_DONE && s->wg[i].end > opt->max_cycles)
      sim_fail(s, i, s->wg[i].pc, "cycle limit of %" G_GINT64_FORMAT " cycles exceeded (the WG's "
               "work completes at cycle %" G_GINT64_FORMAT "; see --max-cycles)",
               opt->max_cycles, s->wg[i].end);
}

/* The options as a run takes them: the cycle limit within 1..TCC_MAX_COUNT
 * (tcc-sim rejects others). */
static SimOptions clamp_options(const SimOptions *options) {
  SimOptions o = *options;
  o.max_cycles = CLAMP(o.max_cycles, 1, TCC_MAX_COUNT);
  return o;
}

gboolean sim_run(const Program *prog, const SimOptions *options, SimResult *res, GError **err) {
  Sim s;
  SimOptions o = clamp_options(options);
  memset(res, 0, sizeof *res);
  sim_init(&s, prog, &o);
  run(&s);
  if (s.err) {
    g_propagate_error(err, s.err);
    s.err = NULL;
    sim_destroy(&s);
    return FALSE;
  }
  finish(&s, res);
  sim_destroy(&s);
  return TRUE;
}

/* ---- grade once, check many ------------------------------------------ */

struct SimTiming {
  const Program *p;
  SimOptions o;     /* as run: timing only, no profile                    */
  GArray *fnlog;    /* FnAct: the functional actions in the timing's order */
  SimResult res;    /* the timing's result (no numerics), if no error      */
  GError *err;      /* the timing's error (after the last logged action)  */
};

SimTiming *sim_time(const Program *prog, const SimOptions *options) {
  SimTiming *t = g_new0(SimTiming, 1);
  t->p = prog;
  t->o = clamp_options(options);
  t->o.timing_only = TRUE;
  t->o.profile = FALSE;
  t->o.keep_hbm = FALSE;
  t->fnlog = g_array_new(FALSE, FALSE, sizeof(FnAct));
  Sim s;
  sim_init(&s, prog, &t->o);
  s.fnlog = t->fnlog;
  run(&s);
  if (s.err) {
    t->err = s.err;
    s.err = NULL;
  } else {
    finish(&s, &t->res);
  }
  sim_destroy(&s);
  return t;
}

gboolean sim_check(const SimTiming *t, uint64_t seed, const WlRef *ref, SimResult *res,
                   GError **err) {
  SimOptions o = t->o;
  o.seed = seed;
  o.timing_only = FALSE;
  Sim s;
  memset(res, 0, sizeof *res);
  sim_init(&s, t->p, &o);
  for (guint i = 0; i < t->fnlog->len && !s.err; i++) {
    const FnAct *a = &g_array_index(t->fnlog, FnAct, i);
    fn_apply(&s, (FnKind)a->kind, a->a, a->pc);
  }
  /* the first error in the full run's order: the data's, else the timing's */
  if (s.err || t->err) {
    if (s.err) {
      g_propagate_error(err, s.err);
      s.err = NULL;
    } else {
      g_propagate_error(err, g_error_copy(t->err));
    }
    sim_destroy(&s);
    return FALSE;
  }
  *res = t->res;
  if (ref)
    wl_check_ref(&t->p->prob, &t->p->abi, ref, s.hbm, &res->check);
  else
    wl_check(&t->p->prob, &t->p->abi, seed, s.hbm, &res->check);
  res->checked = TRUE;
  sim_destroy(&s);
  return TRUE;
}

const SimResult *sim_timing_result(const SimTiming *t, GError **err) {
  if (!t->err) return &t->res;
  g_propagate_error(err, g_error_copy(t->err));
  return NULL;
}

void sim_timing_free(SimTiming *t) {
  if (!t) return;
  g_array_free(t->fnlog, TRUE);
  sim_result_clear(&t->res);
  if (t->err) g_error_free(t->err);
  g_free(t);
}

void sim_result_clear(SimResult *res) {
  g_free(res->hot);
  sim_stages_free(res->stages, res->nstages);
  sim_waits_free(res->waits, res->nwaits);
  trace_free(res->trace);
  g_free(res->hbm);
  memset(res, 0, sizeof *res);
}
