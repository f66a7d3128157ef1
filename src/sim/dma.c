/* dma.c - timing of one DMA descriptor (docs/machine.md §4 "DMA timing").
 *
 * A transfer is cut into segments (runs contiguous on both sides) and each
 * segment into pieces of at most one 64-byte line of the memory side.  The
 * engine issues one piece request per cycle; each piece then books, stage by
 * stage, the earliest free cycles of the resources on its path.  Everything
 * is booked at issue: calendars let later requests fill earlier holes. */
#include "sim_internal.h"

/* One side of a transfer: byte address of element (r, 0) and its step. */
typedef struct Side {
  MemSpace space;
  int wg;          /* MEM_RF: owner of the region */
  uint64_t base;   /* bytes: HBM address, SH offset, or RF byte */
  uint64_t pitch;  /* bytes between rows */
} Side;

static Side rf_side(const Sim *s, const RfRef *r) {
  const Region *g = g_ptr_array_index(s->p->regions, r->region);
  Side d = {MEM_RF, g->wg, g->byte + 4ull * ((uint64_t)r->r0 * g->cols + r->c0), 4ull * g->cols};
  return d;
}

static Side mem_side(const Insn *in) {
  Side d = {(MemSpace)in->space, -1, in->addr, 4ull * (uint64_t)in->stride};
  return d;
}

static int64_t maxi(int64_t a, int64_t b) { return a > b ? a : b; }

/* The RF partition of a byte. */
static inline uint64_t part_of(const Sim *s, uint64_t byte) {
  return s->part_shift >= 0 ? byte >> s->part_shift : byte / (uint64_t)s->part_bytes;
}

/* Book the RF ports of WG `wg` for the piece [byte, byte+len): one cycle per
 * partition touched.  Returns when the last one is done. */
static int64_t rf_ports(Sim *s, Cal *ports, int wg, uint64_t byte, uint64_t len, int64_t t,
                        int w_issuer, int pc) {
  int64_t done = t;
  uint64_t pb = (uint64_t)s->part_bytes;
  for (uint64_t p = part_of(s, byte); p * pb < byte + len; p++) {
    int64_t at = cal_book(&ports[(long)wg * s->vl + (long)p], t, 1);
    uint64_t lo = MAX(byte, p * pb), hi = MIN(byte + len, (p + 1) * pb);
    sim_energy(s, UC_RF, at, 1, EU_RF_BYTE * (SimEnergy)(hi - lo), w_issuer, pc);
    s->uc_busy[UC_RF] += 1;
    done = maxi(done, at + 1);
  }
  return done;
}

/* --trace: the counter of a NoC link (trace.h: in-links after the HBM
 * channels, then out-links). */
static int link_counter(const Sim *s, const Cal *link) {
  uintptr_t a = (uintptr_t)link, in = (uintptr_t)s->noc_in;
  if (a >= in && a < (uintptr_t)(s->noc_in + s->m->sms)) return s->m->hbm_channels + (int)(link - s->noc_in);
  return s->m->hbm_channels + s->m->sms + (int)(link - s->noc_out);
}

/* One crossing of a NoC link moving noc/8 bytes per cycle.  The calendar
 * counts slots of 64 bytes (or of the whole width, if narrower), so a link
 * wider than a piece carries several pieces in one cycle.  Returns the cycle
 * the piece is on the far side, latency included. */
int64_t dma_noc(Sim *s, Cal *link, uint64_t len, int64_t t, int wg, int pc) {
  int64_t k = s->noc_k, slot = s->noc_slot;
  int64_t units = (int64_t)len <= slot ? 1 : ((int64_t)len + slot - 1) / slot;
  int64_t at, first, end;
  if (k == 1) { /* a link at most one piece wide: slots are cycles */
    at = first = cal_book(link, t, units);
    end = at + units;
    s->uc_busy[UC_NOC] += (double)units;
  } else {
    at = cal_book(link, t * k, units);
    first = at / k;
    end = (at + units + k - 1) / k;
    s->uc_busy[UC_NOC] += (double)units / (double)k;
  }
  sim_energy(s, UC_NOC, first, end - first, EU_NOC_BYTE * (SimEnergy)len, wg, pc);
  if (s->tr) trace_count(s->tr, link_counter(s, link), first, (double)len);
  return end + T_NOC_LATENCY;
}

static int64_t hbm_line(Sim *s, uint64_t addr, int64_t t, int wg, int pc) {
  uint64_t line = addr / HBM_LINE;
  int c = (int)(s->chan_mask >= 0 ? line & (uint64_t)s->chan_mask : line % (uint64_t)s->m->hbm_channels);
  int64_t at = cal_book(&s->chan[c], t, 1);
  if (s->tr) trace_count(s->tr, c, at, 1.0);
  sim_energy(s, UC_HBM, at, 1, EU_HBM_LINE, wg, pc);
  s->uc_busy[UC_HBM] += 1;
  s->hbm_lines++;
  if (s->ilines) s->ilines[s->insn_base[wg] + pc]++;
  return at + 1;
}

static int64_t sh_port(Sim *s, int sm, uint64_t len, int64_t t, int wg, int pc) {
  int64_t d = ((int64_t)len + SH_PORT_BYTES - 1) / SH_PORT_BYTES;
  int64_t at = cal_book(&s->sh_port[sm], t, d);
  sim_energy(s, UC_SH, at, d, EU_SH_BYTE * (SimEnergy)len, wg, pc);
  s->uc_busy[UC_SH] += (double)d;
  return at + d + T_SH_LATENCY;
}

/* The path of one piece: `m` is the memory-side byte (HBM/SH) or the
 * destination RF byte for RF->RF copies, `r` the RF byte of the issuer. */
static int64_t piece(Sim *s, Wg *w, const Insn *in, int pc, uint64_t m, uint64_t r,
                     uint64_t len, int64_t t) {
  int sm = w->sm;
  if (in->op == OP_LD && in->space == MEM_HBM) {
    int64_t at = hbm_line(s, m, t, w->id, pc) + T_HBM_LATENCY - 1;
    if (!(in->mods & MOD_MC)) {
      at = dma_noc(s, &s->noc_in[sm], len, at, w->id, pc);
      return rf_ports(s, s->rf_wr, w->id, r, len, at, w->id, pc);
    }
    /* multicast: one read, one crossing per destination SM, then each WG */
    int64_t done = at, sm_at = at;
    int last_sm = -1;
    for (int k = 0; k < sim_insn_ntargets(in); k++) {
      int tw = in->targets[k], tsm = tw / s->m->wgs_per_sm;
      if (tsm != last_sm) sm_at = dma_noc(s, &s->noc_in[tsm], len, at, w->id, pc);
      last_sm = tsm;
      const Region *g = g_ptr_array_index(s->p->regions, sim_insn_tregion(in, k));
      const Region *g0 = g_ptr_array_index(s->p->regions, REF(s, in->d)->region);
      uint64_t rb = r - g0->byte + g->byte; /* same window in the target's region */
      done = maxi(done, rf_ports(s, s->rf_wr, tw, rb, len, sm_at, w->id, pc));
    }
    return done;
  }
  if (in->op == OP_LD) { /* from SH */
    int64_t at = sh_port(s, sm, len, t, w->id, pc);
    return rf_ports(s, s->rf_wr, w->id, r, len, at, w->id, pc);
  }
  /* stores: read the source partitions first */
  int64_t at = rf_ports(s, s->rf_rd, w->id, r, len, t, w->id, pc);
  if (in->space == MEM_HBM) {
    at = dma_noc(s, &s->noc_out[sm], len, at, w->id, pc);
    return hbm_line(s, m, at, w->id, pc) + T_HBM_LATENCY - 1;
  }
  if (in->space == MEM_SH) return sh_port(s, sm, len, at, w->id, pc);
  /* RF -> another WG's RF */
  const Region *g = g_ptr_array_index(s->p->regions, REF(s, in->dst)->region);
  int tsm = g->wg / s->m->wgs_per_sm;
  if (tsm != sm) { /* two crossings: out of this SM, into the other */
    at = dma_noc(s, &s->noc_out[sm], len, at, w->id, pc);
    at = dma_noc(s, &s->noc_in[tsm], len, at, w->id, pc);
  }
  return rf_ports(s, s->rf_wr, g->wg, m, len, at, w->id, pc);
}

/* ---- the fast path of plain HBM loads and stores ---------------------- */

gboolean sim_dma_fast_path = TRUE;

/* The simulator's sums that a load's pieces add to, held in locals for the
 * length of one descriptor: the calendars' stores in between would
 * otherwise force the compiler to reload every one of them per piece.
 * Each sum sees the additions sim_energy would make (integers: exact in
 * any order), and is written back at the end. */
typedef struct Sums {
  SimEnergy *dp;            /* Sim.dp, dp_base, dp_cap, max_t            */
  int64_t base, cap, max_t;
  SimEnergySum e_hbm, e_noc, e_rf; /* Sim.uc_energy of HBM, NoC, RF      */
  int64_t lines, noc, rf;   /* HBM lines, NoC slot-cycles, RF port cycles */
} Sums;

/* sim_energy on the locals (no --profile, no --trace on this path). */
static inline void sums_energy(Sim *s, Sums *u, SimEnergySum *acc, int64_t start, int64_t dur,
                               SimEnergy e) {
  int64_t end = start + dur;
  if (start < u->base || end - u->base >= u->cap) {
    s->max_t = u->max_t; /* sim_trace_grow folds up to it */
    sim_trace_grow(s, start, end);
    u->dp = s->dp;
    u->base = s->dp_base;
    u->cap = s->dp_cap;
  }
  sim_spread(u->dp, u->base, start, dur, e);
  *acc += e;
  if (end > u->max_t) u->max_t = end;
}

/* hbm_line, dma_noc (a link at most one piece wide) and rf_ports on the
 * locals: the same bookings and energy in the same order. */
static inline int64_t sums_hbm(Sim *s, Sums *u, uint64_t m, int64_t t) {
  uint64_t line = m / HBM_LINE;
  int c = (int)(s->chan_mask >= 0 ? line & (uint64_t)s->chan_mask : line % (uint64_t)s->m->hbm_channels);
  int64_t at = cal_book(&s->chan[c], t, 1);
  sums_energy(s, u, &u->e_hbm, at, 1, EU_HBM_LINE);
  u->lines++;
  return at + T_HBM_LATENCY;
}

static inline int64_t sums_noc(Sim *s, Sums *u, Cal *link, uint64_t len, int64_t t) {
  int64_t units = (int64_t)len <= s->noc_slot ? 1 : ((int64_t)len + s->noc_slot - 1) / s->noc_slot;
  int64_t at = cal_book(link, t, units);
  sums_energy(s, u, &u->e_noc, at, units, EU_NOC_BYTE * (SimEnergy)len);
  u->noc += units;
  return at + units + T_NOC_LATENCY;
}

static inline int64_t sums_rf(Sim *s, Sums *u, Cal *ports, uint64_t r, uint64_t len, int64_t t) {
  uint64_t p0 = part_of(s, r);
  if (p0 == part_of(s, r + len - 1)) { /* the loop below, for a piece inside one partition */
    int64_t a = cal_book(&ports[p0], t, 1);
    sums_energy(s, u, &u->e_rf, a, 1, EU_RF_BYTE * (SimEnergy)len);
    u->rf++;
    return maxi(t, a + 1);
  }
  int64_t done = t;
  uint64_t pb = (uint64_t)s->part_bytes;
  for (uint64_t p = part_of(s, r); p * pb < r + len; p++) {
    int64_t a = cal_book(&ports[p], t, 1);
    uint64_t lo = MAX(r, p * pb), hi = MIN(r + len, (p + 1) * pb);
    sums_energy(s, u, &u->e_rf, a, 1, EU_RF_BYTE * (SimEnergy)(hi - lo));
    u->rf++;
    done = maxi(done, a + 1);
  }
  return done;
}

/* piece() of a load from HBM into the issuer's RF (`ports` its write
 * ports, `link` its SM's in-link) or of a store from its RF to HBM (read
 * ports, out-link). */
static int64_t piece_hbm(Sim *s, Sums *u, gboolean load, Cal *link, Cal *ports, uint64_t m,
                         uint64_t r, uint64_t len, int64_t t) {
  if (load) return sums_rf(s, u, ports, r, len, sums_noc(s, u, link, len, sums_hbm(s, u, m, t)));
  return sums_hbm(s, u, m, sums_noc(s, u, link, len, sums_rf(s, u, ports, r, len, t)));
}

int64_t dma_schedule(Sim *s, Wg *w, const Insn *in, int64_t start, int engine) {
  int pc = (int)(in - w->code->insns);
  const RfRef *rf = in->op == OP_LD ? REF(s, in->d) : REF(s, in->a);
  Side rs = rf_side(s, rf);
  Side ms = in->space == MEM_RF ? rf_side(s, REF(s, in->dst)) : mem_side(in);
  uint64_t rowb = 4ull * (uint64_t)rf->cols;
  int64_t *req = &s->req_free[(long)w->sm * s->m->dma_engines + engine];
  int64_t t = maxi(start + T_DMA_SETUP, *req), done = start + 1;
  sim_energy(s, UC_DMA, start, 1, EU_DMA_DESC, w->id, pc);
  /* the commonest descriptors, a plain load from HBM and a store to HBM,
   * take the fast path when no per-instruction record (--profile, --trace)
   * is kept */
  gboolean load = in->op == OP_LD;
  gboolean fast = sim_dma_fast_path && in->space == MEM_HBM && !(in->mods & MOD_MC) &&
                  !s->tr && !s->ie && s->noc_k == 1;
  Sums u = {s->dp, s->dp_base, s->dp_cap, s->max_t, s->uc_energy[UC_HBM], s->uc_energy[UC_NOC],
            s->uc_energy[UC_RF], 0, 0, 0};
  Cal *link = load ? &s->noc_in[w->sm] : &s->noc_out[w->sm];
  Cal *ports = (load ? s->rf_wr : s->rf_rd) + (long)w->id * s->vl;
  for (int i = 0; i < rf->rows;) {
    /* a segment: rows contiguous on both sides merge */
    int j = i + 1;
    while (j < rf->rows && rs.pitch == rowb && ms.pitch == rowb) j++;
    uint64_t m0 = ms.base + (uint64_t)i * ms.pitch, r0 = rs.base + (uint64_t)i * rs.pitch;
    uint64_t len = rowb * (uint64_t)(j - i);
    if (i > 0) t += T_DMA_SEGMENT;
    for (uint64_t off = 0; off < len;) {
      /* a piece ends at the next 64-byte boundary of the memory side */
      uint64_t n = HBM_LINE - (m0 + off) % HBM_LINE;
      if (n > len - off) n = len - off;
      done = maxi(done, fast ? piece_hbm(s, &u, load, link, ports, m0 + off, r0 + off, n, t)
                             : piece(s, w, in, pc, m0 + off, r0 + off, n, t));
      t++;
      off += n;
    }
    i = j;
  }
  if (fast) { /* the sums back into the simulator */
    s->max_t = u.max_t;
    s->uc_energy[UC_HBM] = u.e_hbm;
    s->uc_energy[UC_NOC] = u.e_noc;
    s->uc_energy[UC_RF] = u.e_rf;
    s->uc_busy[UC_HBM] += (double)u.lines;
    s->uc_busy[UC_NOC] += (double)u.noc;
    s->uc_busy[UC_RF] += (double)u.rf;
    s->hbm_lines += u.lines;
  }
  int64_t t0 = maxi(start + T_DMA_SETUP, *req);
  s->uc_busy[UC_DMA] += (double)(t - t0);
  if (s->tr && t > t0) trace_unit(s->tr->dma, w->sm * s->m->dma_engines + engine, t0, t, w->id, pc);
  *req = t;
  return done + 1;
}
