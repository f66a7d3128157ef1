/* trace.c - recording a run's timeline for --trace (trace.h): per
 * instruction its issue and completion, the busy intervals of MMA arrays
 * and DMA engines, and HBM / NoC traffic summed into buckets. */
#include "trace.h"

#include <string.h>

SimTrace *trace_new(const Program *p) {
  SimTrace *t = g_new0(SimTrace, 1);
  t->nwgs = p->nwgs;
  t->insn_base = g_new0(int, p->nwgs + 1);
  for (int w = 0; w < p->nwgs; w++) t->insn_base[w + 1] = t->insn_base[w] + p->wgs[w].n;
  int n = t->insn_base[p->nwgs];
  t->issue = g_new(int64_t, n);
  t->done = g_new(int64_t, n);
  t->start = g_new(int64_t, n);
  t->energy = g_new0(SimEnergy, n);
  for (int i = 0; i < n; i++) t->issue[i] = t->done[i] = t->start[i] = -1;
  t->mma = g_array_new(FALSE, FALSE, sizeof(TraceSlice));
  t->dma = g_array_new(FALSE, FALSE, sizeof(TraceSlice));
  t->nevents = (int)p->events->len;
  t->sigs = g_new(GArray *, MAX(t->nevents, 1));
  for (int e = 0; e < t->nevents; e++) t->sigs[e] = g_array_new(FALSE, FALSE, sizeof(TraceSig));
  t->snap_src = g_array_new(FALSE, FALSE, sizeof(TraceSig));
  t->flows = g_array_new(FALSE, FALSE, sizeof(TraceFlow));
  t->hbm = p->hw.hbm_channels;
  t->sms = p->hw.sms;
  t->ncounters = t->hbm + 2 * t->sms;
  t->bucket = 1;
  t->count = g_new0(double, (size_t)t->ncounters * TRACE_BUCKET_CAP);
  t->unit_e = g_new0(SimEnergySum, (size_t)UC__COUNT * TRACE_BUCKET_CAP);
  return t;
}

void trace_free(SimTrace *t) {
  if (!t) return;
  g_free(t->insn_base);
  g_free(t->issue);
  g_free(t->done);
  g_free(t->start);
  g_free(t->energy);
  g_array_free(t->mma, TRUE);
  g_array_free(t->dma, TRUE);
  for (int e = 0; e < t->nevents; e++) g_array_free(t->sigs[e], TRUE);
  g_free(t->sigs);
  g_array_free(t->snap_src, TRUE);
  g_array_free(t->flows, TRUE);
  g_free(t->count);
  g_free(t->unit_e);
  g_free(t->pw_t);
  g_free(t->pw_v);
  g_free(t);
}

void trace_insn(SimTrace *t, int wg, int pc, int64_t issue, int64_t done) {
  int k = t->insn_base[wg] + pc;
  t->issue[k] = issue;
  t->done[k] = done;
}

void trace_unit(GArray *slices, int track, int64_t t0, int64_t t1, int wg, int pc) {
  TraceSlice s = {t0, t1, track, wg, pc};
  g_array_append_val(slices, s);
}

void trace_sig_sent(SimTrace *t, int snap, int wg, int pc) {
  if ((guint)snap >= t->snap_src->len) g_array_set_size(t->snap_src, (guint)snap + 1);
  TraceSig *src = &g_array_index(t->snap_src, TraceSig, snap);
  src->wg = wg;
  src->pc = pc;
}

void trace_sig_delivered(SimTrace *t, int ev, int64_t count, int snap) {
  TraceSig d = {count, -1, -1};
  if (snap >= 0 && (guint)snap < t->snap_src->len) {
    d.wg = g_array_index(t->snap_src, TraceSig, snap).wg;
    d.pc = g_array_index(t->snap_src, TraceSig, snap).pc;
  }
  g_array_append_val(t->sigs[ev], d);
}

void trace_wait_passed(SimTrace *t, int ev, int64_t n, int wg, int pc) {
  const GArray *d = t->sigs[ev];
  guint lo = 0, hi = d->len; /* the first delivery with count >= n */
  while (lo < hi) {
    guint mid = lo + (hi - lo) / 2;
    if (g_array_index(d, TraceSig, mid).count >= n) hi = mid; else lo = mid + 1;
  }
  if (lo == d->len) return; /* the count was there from the start */
  const TraceSig *s = &g_array_index(d, TraceSig, lo);
  if (s->wg < 0) return;    /* the host's */
  TraceFlow f = {s->wg, s->pc, wg, pc, ev};
  g_array_append_val(t->flows, f);
}

/* Double the bucket size: bucket i of the new size is buckets 2i and 2i+1
 * of the old one (same order of additions for every run). */
static void coarsen_one(double *v) {
  for (int i = 0; i < TRACE_BUCKET_CAP / 2; i++) v[i] = v[2 * i] + v[2 * i + 1];
  memset(v + TRACE_BUCKET_CAP / 2, 0, sizeof(double) * (TRACE_BUCKET_CAP / 2));
}

static void coarsen_e(SimEnergySum *v) {
  for (int i = 0; i < TRACE_BUCKET_CAP / 2; i++) v[i] = v[2 * i] + v[2 * i + 1];
  memset(v + TRACE_BUCKET_CAP / 2, 0, sizeof(SimEnergySum) * (TRACE_BUCKET_CAP / 2));
}

static void coarsen(SimTrace *t) {
  for (int c = 0; c < t->ncounters; c++) coarsen_one(t->count + (size_t)c * TRACE_BUCKET_CAP);
  for (int u = 0; u < UC__COUNT; u++) coarsen_e(t->unit_e + (size_t)u * TRACE_BUCKET_CAP);
  t->bucket *= 2;
}

void trace_count(SimTrace *t, int counter, int64_t cycle, double amount) {
  while (cycle / t->bucket >= TRACE_BUCKET_CAP) coarsen(t);
  t->count[(size_t)counter * TRACE_BUCKET_CAP + (size_t)(cycle / t->bucket)] += amount;
}

void trace_energy(SimTrace *t, int uc, int64_t start, int64_t dur, SimEnergy e) {
  int64_t end = start + dur, more = start + e % dur; /* [start, more) get q + 1 */
  SimEnergy q = e / dur;
  while ((end - 1) / t->bucket >= TRACE_BUCKET_CAP) coarsen(t);
  SimEnergySum *v = t->unit_e + (size_t)uc * TRACE_BUCKET_CAP;
  for (int64_t b = start / t->bucket; b * t->bucket < end; b++) {
    int64_t a = MAX(start, b * t->bucket), z = MIN(end, (b + 1) * t->bucket);
    v[b] += q * (z - a) + MAX(MIN(z, more) - a, 0);
  }
}

void trace_runs_init(TraceRuns *r, const SimTrace *t) {
  r->t0 = t->pw_t;
  r->v = t->pw_v;
  r->n = t->pw_n;
  r->pre = g_new(SimEnergySum, t->pw_n);
  for (size_t i = 0; i < r->n; i++)
    r->pre[i] = i == 0 ? 0 : r->pre[i - 1] + (SimEnergySum)r->v[i - 1] * (r->t0[i] - r->t0[i - 1]);
}

void trace_runs_clear(TraceRuns *r) {
  g_free(r->pre);
  r->pre = NULL;
}

/* The last run starting at or before x, by bisection. */
SimEnergySum trace_runs_energy_before(const TraceRuns *r, int64_t x) {
  size_t lo = 0, hi = r->n; /* t0[lo] <= x < t0[hi] (t0[0] = 0) */
  while (hi - lo > 1) {
    size_t mid = lo + (hi - lo) / 2;
    if (r->t0[mid] <= x) lo = mid; else hi = mid;
  }
  return r->pre[lo] + (SimEnergySum)r->v[lo] * (x - r->t0[lo]);
}

double trace_runs_avg_w(const TraceRuns *r, double static_w, int64_t a, int64_t b) {
  return sim_e_w(trace_runs_energy_before(r, b) - trace_runs_energy_before(r, a), b - a) + static_w;
}

void trace_limits_default(TraceLimits *l) {
  l->max_insn_slices = 100000;
  l->max_unit_slices = 50000;
  l->max_buckets = 1000;
  l->max_flows = 50000;
}
