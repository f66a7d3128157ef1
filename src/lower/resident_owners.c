/* resident_owners.c - P1 weight reuse by output-column split (weights: resident
 * in the p1 section; resident_owners.h, lw_p1_resident_stage).  A projection stage of
 * one layer becomes one *owner* task per (K shard s, panel p), each pinned to
 * its own WG, that keeps its weights for every row tile:
 *
 *   LD   w      <- W[s*K/S .., p*P ..]    once: every weight byte is read
 *   LD   bias   <- b[p*P ..]   (shard 0)  from HBM once per layer
 *   per row tile t, per A chunk c (R x k_chunk, in buffer c % B):
 *     (multicast) WAIT full_b;  else LD the chunk itself
 *     MMA  acc[t%2] (+)= chunk . w[its K rows]
 *     (multicast) SIG free_b
 *     ... a share of tile t-1's epilogue (below)
 *
 * With multicast.PROJ each shard has LW_P1R_ISSUERS issuer tasks on WGs of
 * their own, taking turns by chunk: WAIT until every owner is done with the
 * chunk B places back (free_b), LD.mc the chunk into buffer b of every owner
 * of the shard (one HBM read), SIG full_b (it fires once the LD.mc has
 * completed).  Issuers first WAIT for every owner's `ready` (SIG once its
 * weights are in): the owners' tasks have started, so the buffers may be
 * written (rf_alloc makes a remotely written tensor live from its task's
 * first op).  Events count per buffer, whose rounds cannot overtake each
 * other.  The issuers are not owners: an owner's SIG fires only once all its
 * earlier instructions have completed, so an owner that issued would free
 * its buffers an LD.mc late.
 *
 * Epilogue of tile t (bias, the caller's `finish`: GELU, residual, store)
 * is deferred into tile t+1's chunks, a few ops after each MMA, with its
 * loads hoisted: a chain of dependent VEC ops would otherwise stall the
 * owner's in-order issue, and with it the MMAs every owner of the shard is
 * waiting for.  K shards (k_split) are summed by a chain through scratch:
 * shard S-1 stores its partial of the tile, shard s adds the stored sum of
 * shards > s to its own and stores that, shard 0 adds it and finishes
 * (events l<L>_<proj>_p<P>_sum<s>, one per panel and shard); with
 * multicast each sum goes RF to RF into the next shard's part buffer.
 *
 * Variants (LwP1Resident):
 * - chain_last (k_split_last.PROJ): the last shard starts the chain with the
 *   bias and the residual, which it keeps and loads, and shard s releases
 *   its deferred epilogue only from chunk (S-1-s)*nk/S of the next tile on,
 *   after the shard above has sent its sum;
 * - from = LW_P1_FROM_OWNERS: no issuer tasks, the owners issue the LD.mc
 *   of the chunks in turn (ffn_rf.c's W1, which leaves no WG spare);
 * - from = LW_P1_FROM_STAGE: no issuers, another stage's owners put the
 *   chunks into the buffers (lw_p1_resident_feed: ffn_rf.c's W2);
 * - from = LW_P1_FROM_PASS (multicast.pass): no issuer tasks (their WGs are
 *   kept free, so that everything else is placed as with them), each owner
 *   loads its chunks itself, as candidates (IR_MOD_CAND) that the multicast
 *   pass merges into LD.mc from issuer tasks of its own, with its own
 *   events (multicast.c: the buffer l0.w1.k0.aB's are l0_w1_k0_aB_free and
 *   _full, which the next stage's owners pace their weights by); the owner
 *   waits inline for the stage before its first chunk, so that its weights
 *   still load during that stage;
 * - post: the owner hands tile t off after chunk post_at of tile t+2, with
 *   three accumulators (ffn_rf.c's W1);
 * - open / build / close: stages built together (ffn_rf.c).
 *
 * Apart from resident.c (D1's resident weights) because the mechanism
 * differs: a D1 panel is kept across steps by a preload task and used one
 * row at a time; a P1 owner keeps its unit for one stage and its program is
 * the stage itself (buffers, issuers, tile epilogues, shard chains). */
#include "resident_owners.h"

#include <stdarg.h>
#include <string.h>

#include "attention.h"
#include "builder.h"
#include "fanout.h"
#include "layernorm.h"
#include "project.h"
#include "qkv_store.h"
#include "shard_group.h"
#include "spacing.h"
#include "tile_sync.h"

/* Up to 4 A buffers per owner (8 gained 2% and passed 20 W); 4 issuers per
 * K shard (1: +19% cycles, 2: +2%, 8: no better). */
enum { LW_P1R_BUFFERS = 4, LW_P1R_ISSUERS = 4 };
/* The first resident stage's owners have no earlier stage to pace their
 * weight pieces by and start at once, during the first LayerNorm: they space
 * the pieces by this many cycles (24 qkv owners x 4 KiB per 800 cycles is
 * about 2 HBM lines a cycle beside LayerNorm's; 400 passed 20 W). */
enum { LW_P1R_FIRST_GAP = 800 };
/* With refinements.ln_fold the gap is the plan's ln_fold_first_gap
 * (ln_fold_centred.c, lw_p1_ln_fold_first_gap). */

/* A stage being built: its shape and the tensors of each owner o = s*np+p. */
typedef struct LwP1Res {
  Ir *ir;
  const LwP1Resident *st;
  int P, np, S, KS, R, kc, nk, total, nb, ni;
  int base;                                /* the first owner's place in the WG order */
  int nacc;                                /* accumulators per owner: 2, 3 with st->post */
  int bshard;                              /* the K shard that adds the bias */
  int64_t after_n;                         /* LW_P1_FROM_OWNERS: st->after's count */
  gboolean prev_stage;                     /* a multicast stage before (LwP1State) */
  int prev_after;
  int *task, *buf, *w, *bias, *acc, *pbuf; /* per owner (buf: nb each, acc: 2) */
  int *res;                                /* chain_last: the last shard's residual */
  int *rstd;                               /* ln_fold: shard 0's R x 1 rstd of a tile */
  int *full, *freed;                       /* event of buffer b of shard s: [s*nb + b] */
  /* handoff_fanout (fanout.c), F chains per shard (F 0: none): owner o
   * forwards to next[o] (-1: none); head[s*np + c] heads chain c of shard
   * s; ofull[o*nb + b]: owner o's own `full` event of buffer b */
  int F, *next, *head, *ofull;
  int *ofree; /* handoff_hop_flow (fanout.c): owner o's own free events [o*nb + b], or NULL */
  char *wsym, *bsym;
  const char *unit;                        /* st->unit or st->name: tags and events */
} Res;

/* Output column of owner column p (panel_groups: from the group's first). */
static int col_of(const Res *r, int p) { return r->st->col0 + p * r->P; }

/* The count of group g's family event once g has completed: its tasks
 * and those of the family's earlier groups (as pass_sync counts it). */
static int64_t group_need(const Ir *ir, int g) {
  const IrGroup *grp = g_ptr_array_index(ir->groups, g);
  int64_t n = 0;
  for (guint k = 0; k < ir->tasks->len; k++) {
    int sg = ir_task_at(ir, (int)k)->signals;
    if (sg >= 0 && sg <= g && strcmp(((const IrGroup *)g_ptr_array_index(ir->groups, sg))->event, grp->event) == 0)
      n++;
  }
  return n;
}

/* An event of shard s: "l0_w1_k0_full2". */
static char *shard_event(const Res *r, int s, const char *what, int i) {
  char *ev = i >= 0 ? g_strdup_printf("l%d_%s_k%d_%s%d", r->st->layer, r->unit, s, what, i)
                    : g_strdup_printf("l%d_%s_k%d_%s", r->st->layer, r->unit, s, what);
  return ev;
}

/* SIG / WAIT on event index ev (resolved once: ir_event searches the
 * events by name, and the owners' loops make a few per chunk). */
static void sig_ev(Ir *ir, int task, int ev, IrProv prov) {
  IrOp *op = ir_emit(ir, task, IR_SIG);
  op->event = ev, op->n = 1, op->prov = prov;
}

static void wait_ev(Ir *ir, int task, int ev, int64_t n, IrProv prov) {
  IrOp *op = ir_emit(ir, task, IR_WAIT);
  op->event = ev, op->n = n, op->prov = prov;
}

/* The WGs of the SMs used in the placer's SM-interleaved order, less the
 * pacing WG. */
static GArray *wg_order(const Ir *ir) {
  const Schedule *s = &ir->sched;
  int S = s->sms_used > 0 ? s->sms_used : ir->hw.sms, W = ir->hw.wgs_per_sm;
  GArray *order = g_array_new(FALSE, FALSE, sizeof(int));
  for (int k = 0; k < S * W; k++) {
    int wg = (k % S) * W + k / S;
    if (wg != s->pacing_wg) g_array_append_val(order, wg);
  }
  return order;
}

static void knob_error(Ir *ir, GError **err, const char *group, const char *name, const char *fmt, ...)
    G_GNUC_PRINTF(5, 6);
static void knob_error(Ir *ir, GError **err, const char *group, const char *name, const char *fmt, ...) {
  char knob[32];
  g_snprintf(knob, sizeof knob, "%s.%s", group, name);
  va_list ap;
  va_start(ap, fmt);
  g_autofree char *msg = g_strdup_vprintf(fmt, ap);
  va_end(ap);
  ir_error(ir, err, ir_prov(ir, knob), "weights: resident: %s", msg);
}

/* Do an owner of shard s's tensors fit its WG with nb A buffers?  Every
 * owner keeps w, its accumulators and the finish's R x P tensors (shard
 * 0); the shard that adds the bias keeps it (and, chain_last, the
 * residual); shards below the last the partial sum of the shards above. */
static gboolean shard_fits(const Res *r, int s, int nb) {
  const LwP1Resident *st = r->st;
  int shape[5 + LW_P1R_BUFFERS + 5][2], n = 0;
  shape[n][0] = r->KS, shape[n++][1] = r->P; /* w */
  if (st->fold) shape[n][0] = r->R, shape[n++][1] = 1; /* rstd (ln_fold_centred.c) */
  if (s == r->bshard) shape[n][0] = 1, shape[n++][1] = r->P; /* bias */
  if (s == r->bshard && s > 0 && st->res.sym) shape[n][0] = r->R, shape[n++][1] = r->P; /* res */
  for (int b = 0; b < nb; b++) shape[n][0] = r->R, shape[n++][1] = r->kc;
  int rp = r->nacc + (s == 0 && !st->extra_rows ? st->extra : 0) + (s < r->S - 1);
  for (int k = 0; k < rp; k++) shape[n][0] = r->R, shape[n++][1] = r->P;
  for (int k = 0; s == 0 && st->extra_rows && k < st->extra; k++) shape[n][0] = st->extra_rows, shape[n++][1] = r->P;
  return lw_attention_fits(r->ir, (const int(*)[2])shape, n, r->ir->hw.vl);
}

/* The A buffers an owner can have: the most, up to LW_P1R_BUFFERS (at
 * least 2, so that a chunk lands while the previous one is multiplied),
 * beside what it keeps live at once (shard_fits, on every shard); 0 with
 * an error at the panel knob when not even 2 fit its WG's RF. */
static int buffers(Res *r, GError **err) {
  const LwP1Resident *st = r->st;
  for (int nb = MIN(LW_P1R_BUFFERS, MAX(2, r->total)); nb >= 2; nb--) {
    gboolean all = TRUE;
    for (int s = 0; s < r->S && all; s++) all = shard_fits(r, s, nb);
    if (all) return nb;
  }
  knob_error(r->ir, err, "panels", st->name,
             "a %s panel shard is %d x %d = %d KiB and, with 2 buffers of %d x %d for A and the "
             "%d x %d results, does not fit a WG's %d partitions: narrow the panel, raise "
             "k_split.%s or lower k_chunk.%s",
             st->name, r->KS, r->P, 4 * r->KS * r->P / 1024, r->R, r->kc, r->R, r->P, r->ir->hw.vl,
             st->name, st->name);
  return 0;
}

/* Chunk c (tile c / nk, chunk c % nk) of shard s's A into `buf`: rows
 * t*R.., the shard's columns. */
static void load_chunk(const Res *r, int task, IrView buf, int s, int c, IrProv prov) {
  int t = c / r->nk, k = c % r->nk;
  const LwSource *a = &r->st->a;
  LwMat m = {a->col, a->stride, a->packed};
  lw_load_mat(r->ir, task, buf, a->sym, &m, t * r->R, s * r->KS + k * r->kc, prov); /* one LD: one block */
}

/* The tensors of every owner; its task pinned to the WG after the cursor. */
static void make_owners(Res *r, const GArray *order) {
  const LwP1Resident *st = r->st;
  Ir *ir = r->ir;
  int owners = r->np * r->S;
  int *wgs = g_new(int, owners); /* owner o's WG: the order's, or shard_group.c's */
  for (int o = 0; o < owners; o++) wgs[o] = g_array_index(order, int, (r->base + o) % order->len);
  lw_shard_group(ir, st->role.proj, wgs, owners);
  if (r->F) { /* fanout.c: the chains of each shard, by its owners' SMs */
    int *nx = g_new(int, r->np), *hd = g_new(int, r->np);
    for (int s = 0; s < r->S; s++) {
      int o0 = s * r->np;
      lw_p1_fanout_chains(ir, r->F, wgs + o0, r->np, nx, hd);
      for (int q = 0; q < r->np; q++) r->next[o0 + q] = nx[q] < 0 ? -1 : o0 + nx[q];
      for (int c = 0; c < r->F; c++) r->head[o0 + c] = o0 + hd[c];
    }
    g_free(nx), g_free(hd);
  }
  for (int s = 0; s < r->S; s++)
    for (int p = 0; p < r->np; p++) {
      int o = s * r->np + p;
      g_autofree char *tag = g_strdup_printf("l%d.%s.k%d.p%d", st->layer, r->unit, s, p);
      g_autofree char *shard = g_strdup_printf("l%d.%s.k%d", st->layer, r->unit, s);
      IrRole role = st->role;
      role.panel = p, role.kshard = s;
      int t = r->task[o] = lw_task(ir, tag, st->stage, st->pj->prov, role);
      ir_task_at(ir, t)->pin = wgs[o];
      /* with multicast an owner reads the stage's input only after a WAIT
       * for a chunk, which its issuer loaded after the previous stage: it
       * need not wait for that stage, only for the start of the previous
       * resident one, during which it loads its weights (paced: owner());
       * the first one's owners start at once */
      int dep = !st->multicast ? st->after : r->prev_stage ? r->prev_after : -1;
      if (dep >= 0) ir_task_waits(ir, t, dep);
      ir_task_signals(ir, t, st->grp);
      r->w[o] = lw_rf_sub(ir, t, tag, "w", r->KS, r->P);
      r->bias[o] = s == r->bshard ? lw_rf_sub(ir, t, tag, "bias", 1, r->P) : -1;
      r->res[o] = s == r->bshard && s > 0 && st->res.sym ? lw_rf_sub(ir, t, tag, "res", r->R, r->P) : -1;
      for (int b = 0; b < r->nb; b++) { /* named alike on every owner: LD.mc targets */
        char what[8];
        g_snprintf(what, sizeof what, "a%d", b);
        r->buf[o * r->nb + b] = lw_rf_sub(ir, t, shard, what, r->R, r->kc);
      }
      for (int a = 0; a < r->nacc; a++) {
        char what[8];
        g_snprintf(what, sizeof what, "acc%d", a);
        r->acc[r->nacc * o + a] = lw_rf_sub(ir, t, tag, what, r->R, r->P);
      }
      r->pbuf[o] = s < r->S - 1 ? lw_rf_sub(ir, t, tag, "part", r->R, r->P) : -1;
      r->rstd[o] = st->fold ? lw_rf_sub(ir, t, tag, "rstd", r->R, 1) : -1; /* ln_fold_centred.c */
    }
  g_free(wgs);
}

/* In task `me`: wait until every owner of shard s is done with the chunk
 * that buffer c % nb held before, LD.mc chunk c into that buffer of each,
 * SIG it full (once the LD.mc has completed). */
static void issue_chunk(Res *r, int me, int s, int c) {
  const LwP1Resident *st = r->st;
  Ir *ir = r->ir;
  int b = c % r->nb, o0 = s * r->np;
  if (c >= r->nb) wait_ev(ir, me, r->freed[s * r->nb + b], (int64_t)r->np * (c / r->nb), st->mc_prov);
  load_chunk(r, me, ir_all(ir, r->buf[o0 * r->nb + b]), s, c, st->mc_prov);
  GArray *ops = ir_task_at(ir, me)->ops;
  IrOp *op = &g_array_index(ops, IrOp, ops->len - 1);
  op->mods |= IR_MOD_MC;
  op->ntargets = r->np;
  op->targets = g_new(int, r->np);
  for (int q = 0; q < r->np; q++) op->targets[q] = r->buf[(o0 + q) * r->nb + b];
  sig_ev(ir, me, r->full[s * r->nb + b], st->mc_prov);
}

/* issue_chunk, after the previous stage's tile event of chunk c's row tile
 * when the stage is tile-synchronised (tile_sync.c); *waited: the last
 * tile this task waited for. */
static void issue_synced(Res *r, int me, int s, int c, int *waited) {
  const LwP1Resident *st = r->st;
  if (st->wait_tiles.stage && c / r->nk > *waited)
    lw_p1_tile_wait(r->ir, me, &st->wait_tiles, *waited = c / r->nk, st->sync_prov);
  issue_chunk(r, me, s, c);
}

/* Issuer i of shard s: chunks i, i+ni, ... into every owner's buffers. */
static void issuer(Res *r, int s, int i, int wg) {
  const LwP1Resident *st = r->st;
  Ir *ir = r->ir;
  g_autofree char *tag = g_strdup_printf("l%d.%s.k%d.mc%d", st->layer, r->unit, s, i);
  g_autofree char *ready = shard_event(r, s, "ready", -1);
  IrRole role = st->role;
  role.kshard = s;
  int me = lw_task(ir, tag, st->stage, st->mc_prov, role);
  ir_task_at(ir, me)->pin = wg;
  gboolean tiles = st->wait_tiles.stage != NULL;
  if (st->after >= 0 && !tiles) ir_task_waits(ir, me, st->after);
  ir_task_signals(ir, me, st->grp);
  lw_wait(ir, me, ready, r->np, st->mc_prov);
  int waited = -1; /* tile_sync: the rows of each tile, not the whole stage */
  for (int c = i; c < r->total; c += r->ni) {
    if (c > i) lw_issue_space(ir, me, st->role.proj); /* issue_spacing.PROJ */
    issue_synced(r, me, s, c, &waited);
  }
}

/* Does op touch RF tensor t (any view)? */
static gboolean touches(const IrOp *op, int t) {
  return op->d.t == t || op->a.t == t || op->b.t == t || op->c.t == t || op->mem.t == t;
}

/* Move the ops emitted into `task` since op n into `held`, loads first where
 * that keeps the order that matters: an LD moves ahead of ops that do not
 * touch its destination, never across a SIG/WAIT/WAITT (an event may be
 * what makes its source valid).  The ops of a K/V piece's round trip that
 * the kv_writeback pass removes (lw_qkv_transient) are not in the way: the
 * spread is that of the program the pass leaves. */
static void hold_tail(Ir *ir, int task, guint n, GArray *held) {
  GArray *ops = ir_task_at(ir, task)->ops;
  guint base = held->len;
  for (guint i = n; i < ops->len; i++) {
    IrOp op = g_array_index(ops, IrOp, i);
    guint at = held->len;
    if (op.kind == IR_LD && op.mem.t >= 0 && ir_tensor(ir, op.mem.t)->home == HOME_HBM &&
        !lw_qkv_transient(ir, &op))
      for (; at > base; at--) {
        const IrOp *q = &g_array_index(held, IrOp, at - 1);
        if (touches(q, op.d.t)) break;
        if (lw_qkv_transient(ir, q)) continue;
        if (q->kind == IR_SIG || q->kind == IR_WAIT || q->kind == IR_WAITT || q->kind == IR_LD) break;
      }
    g_array_insert_val(held, at, op);
  }
  g_array_set_size(ops, n);
}

/* The held ops the program keeps (not lw_qkv_transient). */
static guint kept_ops(const Ir *ir, const GArray *held) {
  guint n = 0;
  for (guint i = 0; i < held->len; i++) n += !lw_qkv_transient(ir, &g_array_index(held, IrOp, i));
  return n;
}

/* Append held ops to the task up to the k-th one it keeps (every one: k at
 * least kept_ops). */
static void release(Ir *ir, int task, GArray *held, guint k) {
  guint m = 0;
  for (guint kept = 0; m < held->len && kept < k; m++) kept += !lw_qkv_transient(ir, &g_array_index(held, IrOp, m));
  if (m == 0) return;
  g_array_append_vals(ir_task_at(ir, task)->ops, held->data, m);
  g_array_remove_range(held, 0, m);
}

/* Tile t's epilogue on owner o: the chain over K shards, then (shard 0) the
 * bias and the caller's finish. */
/* Owner o's epilogue events: the same names for every tile, so each is
 * named and looked up once per owner, on its first use (where lw_wait /
 * lw_sig would create it: the events keep their order).  Formatting them
 * per tile was ~10% of tcc-gen's instructions on best.yaml's P1. */
typedef struct EpiEvents {
  int above, took, mine, took_prev, ready_prev; /* event indices, -1 until first use */
} EpiEvents;

/* The index of event "l0_w2_p3_sum1" / "..._took1" (what = "sum" or
 * "took", of owner column p and shard n), made on first use. */
static int epi_event(Res *r, int *ev, const char *what, int p, int n) {
  if (*ev < 0) {
    char name[64];
    g_snprintf(name, sizeof name, "l%d_%s_p%d_%s%d", r->st->layer, r->unit, p, what, n);
    *ev = ir_event(r->ir, name);
  }
  return *ev;
}

static void epilogue(Res *r, int o, int i, int t, IrView av, const char *tag, EpiEvents *ev) {
  const LwP1Resident *st = r->st;
  Ir *ir = r->ir;
  int s = o / r->np, p = o % r->np, me = r->task[o];
  gboolean mc = st->multicast;
  if (s == r->bshard && s > 0) { /* the last shard starts the sum with the bias (and residual) */
    IrOp *op = ir_emit(ir, me, IR_VADD);
    op->d = av, op->a = av, op->b = ir_all(ir, r->bias[o]), op->prov = st->last_prov;
    if (r->res[o] >= 0) {
      IrView rv = ir_all(ir, r->res[o]);
      LwMat m = {st->res.col, st->res.stride, st->res.packed};
      lw_load_mat(ir, me, rv, st->res.sym, &m, t * r->R, col_of(r, p), st->res.prov);
      op = ir_emit(ir, me, IR_VADD);
      op->d = av, op->a = av, op->b = rv, op->prov = st->last_prov;
    }
  }
  if (s < r->S - 1) { /* add what shards > s have summed */
    IrView pv = ir_all(ir, r->pbuf[o]);
    wait_ev(ir, me, epi_event(r, &ev->above, "sum", p, s + 1), i + 1, st->split_prov);
    if (!mc)
      lw_load(ir, me, pv, "scratch", t * r->R, st->part_col[s] + col_of(r, p), st->part_stride, st->split_prov);
    IrOp *op = ir_emit(ir, me, IR_VADD);
    op->d = av, op->a = av, op->b = pv, op->prov = st->split_prov;
    if (mc) { /* the part buffer may take the next tile's sum */
      sig_ev(ir, me, epi_event(r, &ev->took, "took", p, s), st->split_prov);
    }
  }
  if (s > 0) { /* the sum of shards >= s, for shard s-1 */
    if (!mc) {
      lw_store(ir, me, av, "scratch", t * r->R, st->part_col[s - 1] + col_of(r, p), st->part_stride, st->split_prov);
    } else { /* straight into shard s-1's part buffer, once it is free */
      if (i == 0) { /* its task has started */
        if (ev->ready_prev < 0) {
          g_autofree char *ready = shard_event(r, s - 1, "ready", -1);
          ev->ready_prev = ir_event(ir, ready);
        }
        wait_ev(ir, me, ev->ready_prev, r->np, st->split_prov);
      } else {
        wait_ev(ir, me, epi_event(r, &ev->took_prev, "took", p, s - 1), i, st->split_prov);
      }
      IrOp *op = ir_emit(ir, me, IR_ST);
      op->a = av, op->mem = ir_all(ir, r->pbuf[o - r->np]), op->prov = st->split_prov;
    }
    sig_ev(ir, me, epi_event(r, &ev->mine, "sum", p, s), st->split_prov);
    return;
  }
  if (st->fold) { /* ln_fold_centred.c: acc * rstd + (bW + c) */
    lw_p1_ln_fold_finish(ir, me, av, ir_all(ir, r->rstd[o]), ir_all(ir, r->bias[o]), t, st->fold);
  } else if (r->bshard == 0) {
    IrOp *op = ir_emit(ir, me, IR_VADD);
    op->d = av, op->a = av, op->b = ir_all(ir, r->bias[o]), op->prov = st->prov;
  }
  st->finish(st->ctx, me, tag, t, col_of(r, p), av);
  if (st->publish_tiles) lw_p1_tile_signal(ir, me, st->layer, st->name, t, st->sync_prov);
}

/* Owner o's hand-off of tile t (st->post), its finished accumulator. */
static void post_tile(Res *r, int o, const char *tag, int t) {
  const LwP1Resident *st = r->st;
  st->post(st->ctx, r->task[o], tag, t, col_of(r, o % r->np), ir_all(r->ir, r->acc[r->nacc * o + t % r->nacc]));
}

/* Owner o's program.  Weight piece k of owner o (of n) waits until the
 * previous multicast stage has had chunk (k*n + o) * T / (nk*n) of its T
 * delivered (its shard 0's `full` events), so that the owners of a stage,
 * which start during the previous one, load their weights along with it,
 * one piece at a time, rather than all at once (1 MiB of W2 at once passed
 * 27 W).  The first stage's owners space their pieces by
 * LW_P1R_FIRST_GAP cycles instead. */
static void owner(Res *r, int o, const LwP1State *state) {
  const LwP1Resident *st = r->st;
  Ir *ir = r->ir;
  int s = o / r->np, p = o % r->np, me = r->task[o];
  gboolean mc = st->multicast;
  gboolean paced = st->multicast && state->prev_stage[0];
  /* LW_P1_FROM_OWNERS: owner p of the shard issues the chunks c = p mod np,
   * right after its own MMA of chunk c - L, L = nb - 1: the buffer c takes
   * held chunk c - nb, which the issuer is done with; the others may be at
   * most one chunk behind it before it waits */
  gboolean self = mc && st->from == LW_P1_FROM_OWNERS;
  /* LW_P1_FROM_PASS: candidate loads of its own (multicast.c merges them) */
  gboolean cand = mc && st->from == LW_P1_FROM_PASS;
  int waited = -1; /* self: the last tile_sync tile waited for */
  /* chain_last: shard s's part of the sum after the shards above have sent theirs */
  int from = r->bshard > 0 ? (r->S - 1 - s) * r->nk / r->S : 0;
  int L = r->nb - 1;
  /* st->post: tile t's hand-off after chunk `at` of tile t+2 (its epilogue
   * is done by then, and acc[t % 3] still holds it) */
  gboolean post = st->post && s == 0;
  int at = post ? st->post_at(st->ctx, col_of(r, p), r->nk) : 0;
  for (int k = 0; k < r->nk; k++) {
    if (paced) { /* owner o's pieces between the others': no bursts */
      int n = r->np * r->S, c = (int)((int64_t)(k * n + o) * state->prev_total / (r->nk * n));
      g_autofree char *ev = state->prev_pass ? g_strdup_printf("%s_a%d_full", state->prev_stage, c % state->prev_nb)
                                             : g_strdup_printf("%s_full%d", state->prev_stage, c % state->prev_nb);
      lw_wait(ir, me, ev, c / state->prev_nb + 1, st->prov);
      if (k > 0) lw_piece_space(ir, me, st->role.proj); /* a late owner's pieces: spaced */
    }
    else if (st->multicast && k > 0) { /* the first stage: nothing to pace by but time */
      IrProv gp = st->prov;
      int64_t gap = st->fold ? lw_p1_ln_fold_first_gap(ir, &gp) : LW_P1R_FIRST_GAP;
      if (gap > 0) lw_waitt(ir, me, gap, gp);
    }
    if (st->multicast && k == 0) lw_piece_stagger(ir, me, st->role.proj, o); /* weight_stagger */
    lw_load(ir, me, ir_win(r->w[o], k * r->kc, r->kc, 0, r->P), r->wsym, s * r->KS + k * r->kc, col_of(r, p),
            st->ld ? st->ld : st->N, st->prov);
  }
  if (r->bias[o] >= 0) lw_load(ir, me, ir_all(ir, r->bias[o]), r->bsym, 0, col_of(r, p), st->ld ? st->ld : st->N, st->prov);
  if (mc) {
    g_autofree char *ready = shard_event(r, s, "ready", -1);
    lw_sig(ir, me, ready, st->mc_prov);
    if (self) { /* every owner has started (its buffers may be written), A is complete */
      lw_wait(ir, me, ready, r->np, st->mc_prov);
      if (st->after >= 0 && !st->wait_tiles.stage) {
        const IrGroup *g = g_ptr_array_index(ir->groups, st->after);
        lw_wait(ir, me, g->event, r->after_n, st->mc_prov);
      }
      for (int c = p; c < MIN(L, r->total); c += r->np) issue_synced(r, me, s, c, &waited);
    }
    if (cand && st->after >= 0) { /* A is complete (the weights came before) */
      const IrGroup *g = g_ptr_array_index(ir->groups, st->after);
      lw_wait(ir, me, g->event, r->after_n, st->mc_prov);
    }
  }
  /* ln_fold_centred.c: the panel folded after `ready` (the issuers need not wait
   * for it); piece by piece during the loads, each MMA beside the previous
   * stage's, was 2% slower */
  if (st->fold) {
    g_autofree char *ftag = g_strdup_printf("l%d.%s.k%d.p%d", st->layer, r->unit, s, p);
    LwP1Folding fd = lw_p1_ln_fold_start(ir, me, ftag, ir_all(ir, r->w[o]), o, st->fold);
    lw_p1_ln_fold_piece(ir, me, &fd, ir_all(ir, r->w[o]), 0, r->KS, st->fold);
    lw_p1_ln_fold_end(ir, me, &fd, ir_all(ir, r->w[o]), ir_all(ir, r->bias[o]), st->fold);
  }
  g_autofree char *tag = g_strdup_printf("l%d.%s.k%d.p%d", st->layer, r->unit, s, p);
  EpiEvents epi = {-1, -1, -1, -1, -1};
  g_autoptr(GArray) held = g_array_new(FALSE, FALSE, sizeof(IrOp));
  for (int c = 0; c < r->total; c++) {
    /* round i of the tiles is tile t (st->tile_order: attention.handoff) */
    int i = c / r->nk, t = st->tile_order ? st->tile_order[i] : i, k = c % r->nk, b = c % r->nb;
    IrView a = ir_all(ir, r->buf[o * r->nb + b]), av = ir_all(ir, r->acc[r->nacc * o + i % r->nacc]);
    if (mc && !cand && r->F) { /* fanout.c: its own event, then pass the chunk on */
      wait_ev(ir, me, r->ofull[o * r->nb + b], c / r->nb + 1, st->fanout_prov);
      if (r->next[o] >= 0) {
        if (r->ofree) lw_p1_hop_flow_wait(ir, me, r->ofree, r->next[o], r->nb, c, st->hop_prov);
        IrOp *op = ir_emit(ir, me, IR_ST);
        op->a = a, op->mem = ir_all(ir, r->buf[r->next[o] * r->nb + b]), op->prov = st->fanout_prov;
        sig_ev(ir, me, r->ofull[r->next[o] * r->nb + b], st->fanout_prov);
      }
    } else if (mc && !cand) {
      wait_ev(ir, me, r->full[s * r->nb + b], c / r->nb + 1, st->mc_prov);
    } else {
      load_chunk(r, me, a, s, c, cand ? st->mc_prov : st->a.prov);
      GArray *ops = ir_task_at(ir, me)->ops;
      if (cand) g_array_index(ops, IrOp, ops->len - 1).mods |= IR_MOD_CAND;
    }
    IrOp *op = ir_emit(ir, me, IR_MMA);
    op->mods = k == 0 ? IR_MOD_Z : 0, op->d = av, op->a = a;
    op->b = ir_win(r->w[o], k * r->kc, r->kc, 0, r->P), op->prov = st->pj->kprov;
    if (mc && !cand && r->ofree) /* fanout.c: its own */
      sig_ev(ir, me, r->ofree[o * r->nb + b], st->hop_prov);
    else if (mc && !cand)
      sig_ev(ir, me, r->freed[s * r->nb + b], st->mc_prov);
    if (self && c + L < r->total && (c + L) % r->np == p) { /* issue_spacing.PROJ: before its turn */
      lw_issue_space(ir, me, st->role.proj);
      issue_synced(r, me, s, c + L, &waited);
    }
    if (post && t >= 2 && k == at) post_tile(r, o, tag, t - 2);
    /* spread the previous tile's epilogue over this tile's chunks */
    if (k >= from) release(ir, me, held, (kept_ops(ir, held) + (guint)(r->nk - k) - 1) / (guint)(r->nk - k));
    if (k < r->nk - 1) continue;
    release(ir, me, held, held->len);
    guint n = ir_task_at(ir, me)->ops->len;
    epilogue(r, o, i, t, av, tag, &epi);
    hold_tail(ir, me, n, held);
  }
  release(ir, me, held, held->len);
  for (int t = MAX(0, st->tiles - 2); post && t < st->tiles; t++) post_tile(r, o, tag, t);
}

static void res_free(Res *r) {
  g_free(r->res), g_free(r->rstd), g_free(r->task), g_free(r->buf), g_free(r->w), g_free(r->bias), g_free(r->acc), g_free(r->pbuf);
  g_free(r->wsym), g_free(r->bsym), g_free(r->full), g_free(r->freed);
  g_free(r->next), g_free(r->head), g_free(r->ofull), g_free(r->ofree);
  g_free(r);
}

LwP1Res *lw_p1_resident_open(Ir *ir, const LwP1State *state, const LwP1Resident *st, int skip, GError **err) {
  Res *r = g_new0(Res, 1);
  *r = (Res){.ir = ir, .st = st, .P = st->pj->panel, .S = st->shards, .R = st->R,
             .unit = st->unit ? st->unit : st->name};
  r->np = st->N / r->P;
  r->KS = st->K / r->S;
  r->kc = MIN(st->pj->k_chunk, r->KS);
  r->nacc = st->post ? 3 : 2;
  r->bshard = st->chain_last && st->multicast ? r->S - 1 : 0;
  if (r->KS % r->kc != 0) {
    knob_error(ir, err, "k_chunk", st->name, "k_chunk.%s=%d does not divide a K shard of %d rows (K=%d / k_split %d)",
               st->name, st->pj->k_chunk, r->KS, st->K, r->S);
    g_free(r);
    return NULL;
  }
  r->nk = r->KS / r->kc;
  r->total = st->tiles * r->nk;
  if ((r->nb = buffers(r, err)) == 0) {
    g_free(r);
    return NULL;
  }
  g_autoptr(GArray) order = wg_order(ir);
  int owners = r->np * r->S, spare = (int)order->len - skip - owners;
  if (spare < 0) {
    if (skip)
      knob_error(ir, err, "panels", st->name,
                 "%s has %d panels x %d K shards = %d owners, but the SMs used have %u WGs and the stage "
                 "it runs with takes %d of them: widen the panel, use more SMs, or hand off through HBM "
                 "with panel_groups.%s",
                 st->name, r->np, r->S, owners, order->len, skip, st->name);
    else
      knob_error(ir, err, "panels", st->name,
                 "%s has %d panels x %d K shards = %d owners, but the SMs used have %u WGs: widen "
                 "the panel, raise panel_groups.%s or use more SMs",
                 st->name, r->np, r->S, owners, order->len, st->name);
    g_free(r);
    return NULL;
  }
  /* LW_P1_FROM_PASS: the WGs are kept free for the pass's issuer tasks
   * (multicast.c takes WGs with no task of the stage), no task made */
  r->ni = st->multicast && (st->from == LW_P1_FROM_ISSUERS || st->from == LW_P1_FROM_PASS)
              ? MIN(LW_P1R_ISSUERS, spare / r->S)
              : 0;
  if (st->multicast && st->from == LW_P1_FROM_ISSUERS && r->ni < 1) {
    knob_error(ir, err, "multicast", st->name,
               "multicast.%s needs a WG per K shard besides the %d owners to issue the loads, but "
               "the SMs used have %u WGs: use more SMs, wider panels, more panel_groups.%s or no multicast",
               st->name, owners, order->len, st->name);
    g_free(r);
    return NULL;
  }
  r->base = state->cursor + skip;
  r->prev_stage = state->prev_stage[0] != '\0';
  r->prev_after = state->prev_after;
  r->after_n = (st->from == LW_P1_FROM_OWNERS || st->from == LW_P1_FROM_PASS) && st->after >= 0
                   ? group_need(ir, st->after)
                   : 0;
  r->wsym = lw_weight_sym(st->pj->proj, st->layer);
  r->bsym = lw_bias_sym(st->pj->proj, st->layer);
  r->task = g_new(int, owners);
  r->buf = g_new(int, (gsize)owners * r->nb);
  r->w = g_new(int, owners), r->bias = g_new(int, owners), r->acc = g_new(int, r->nacc * owners);
  r->pbuf = g_new(int, owners);
  r->res = g_new(int, owners);
  r->rstd = g_new(int, owners);
  r->full = g_new(int, r->S * r->nb), r->freed = g_new(int, r->S * r->nb);
  for (int s = 0; s < r->S; s++)
    for (int b = 0; b < r->nb; b++) {
      g_autofree char *full = shard_event(r, s, "full", b), *freed = shard_event(r, s, "free", b);
      r->full[s * r->nb + b] = ir_event(ir, full), r->freed[s * r->nb + b] = ir_event(ir, freed);
    }
  /* handoff_fanout (fanout.c): fewer chains than owners, or none */
  r->F = st->from == LW_P1_FROM_STAGE && st->fanout > 0 && st->fanout < r->np ? st->fanout : 0;
  if (r->F) {
    r->next = g_new(int, owners), r->head = g_new(int, owners), r->ofull = g_new(int, (gsize)owners * r->nb);
    for (int o = 0; o < owners; o++)
      for (int b = 0; b < r->nb; b++) {
        g_autofree char *ev = g_strdup_printf("l%d_%s_k%d_p%d_full%d", st->layer, r->unit, o / r->np, o % r->np, b);
        r->ofull[o * r->nb + b] = ir_event(ir, ev);
      }
    if (st->hop_flow) r->ofree = lw_p1_hop_flow_events(ir, st->layer, r->unit, owners, r->np, r->nb);
  }
  make_owners(r, order);
  return r;
}

void lw_p1_resident_build(LwP1Res *r, const LwP1State *state) {
  int owners = r->np * r->S;
  g_autoptr(GArray) order = wg_order(r->ir);
  for (int o = 0; o < owners; o++) owner(r, o, state);
  for (int s = 0; s < r->S && r->st->from == LW_P1_FROM_ISSUERS; s++)
    for (int i = 0; i < r->ni; i++)
      issuer(r, s, i, g_array_index(order, int, (r->base + owners + s * r->ni + i) % order->len));
}

int lw_p1_resident_wgs(const LwP1Res *r) { return r->np * r->S + r->S * r->ni; }

void lw_p1_resident_close(LwP1Res *r, LwP1State *state) {
  const LwP1Resident *st = r->st;
  g_autoptr(GArray) order = wg_order(r->ir);
  state->cursor = (state->cursor + lw_p1_resident_wgs(r)) % (int)order->len;
  state->prev_stage[0] = '\0';
  /* multicast.pass merges the loads of a shard's np owners: with one owner
   * per shard (one panel) it merges nothing and makes no `full` events,
   * so the next stage has nothing to pace its weights by */
  if (st->multicast && !(st->from == LW_P1_FROM_PASS && r->np < 2)) {
    g_snprintf(state->prev_stage, sizeof state->prev_stage, "l%d_%s_k0", st->layer, r->unit);
    state->prev_nb = r->nb, state->prev_total = r->total, state->prev_after = st->after;
    state->prev_pass = st->from == LW_P1_FROM_PASS;
  }
  res_free(r);
}

int lw_p1_resident_chunk(const LwP1Res *r, int col, int *nk) {
  *nk = r->nk;
  return (col % r->KS) / r->kc;
}

void lw_p1_resident_feed(Ir *ir, const LwP1Res *r, int task, int tile, int col, IrView v, IrProv prov) {
  int round = tile;
  for (int i = 0; r->st->tile_order && i < r->st->tiles; i++)
    if (r->st->tile_order[i] == tile) round = i;
  int s = col / r->KS, k = (col % r->KS) / r->kc, c = round * r->nk + k, b = c % r->nb, o0 = s * r->np;
  if (c < r->nb) { /* the first round: once the owners have started */
    g_autofree char *ready = shard_event(r, s, "ready", -1);
    lw_wait(ir, task, ready, r->np, prov);
  } else if (!r->ofree) { /* every owner has freed it (hop_flow: each head, below) */
    wait_ev(ir, task, r->freed[s * r->nb + b], (int64_t)r->np * (c / r->nb), prov);
  }
  if (r->F) { /* fanout.c: into the chains' heads, each with its own event */
    for (int h = 0; h < r->F; h++) {
      if (r->ofree) lw_p1_hop_flow_wait(ir, task, r->ofree, r->head[o0 + h], r->nb, c, r->st->hop_prov);
      IrOp *op = ir_emit(ir, task, IR_ST);
      op->a = v, op->mem = ir_all(ir, r->buf[r->head[o0 + h] * r->nb + b]), op->prov = r->st->fanout_prov;
    }
    for (int h = 0; h < r->F; h++) sig_ev(ir, task, r->ofull[r->head[o0 + h] * r->nb + b], r->st->fanout_prov);
    /* the shard's own: the next stage's owners pace their weights by it */
    sig_ev(ir, task, r->full[s * r->nb + b], prov);
    return;
  }
  for (int q = 0; q < r->np; q++) {
    IrOp *op = ir_emit(ir, task, IR_ST);
    op->a = v, op->mem = ir_all(ir, r->buf[(o0 + q) * r->nb + b]), op->prov = prov;
  }
  sig_ev(ir, task, r->full[s * r->nb + b], prov);
}

gboolean lw_p1_resident_stage(Ir *ir, LwP1State *state, const LwP1Resident *st, GError **err) {
  LwP1Res *r = lw_p1_resident_open(ir, state, st, 0, err);
  if (!r) return FALSE;
  lw_p1_resident_build(r, state);
  lw_p1_resident_close(r, state);
  return TRUE;
}

int lw_p1_resident_owners(const Ir *ir, const LwP1Resident *st) {
  g_autoptr(GArray) order = wg_order(ir);
  return MIN(st->N / st->pj->panel * st->shards, (int)order->len);
}

int lw_p1_free_wg(const Ir *ir, const LwP1State *state, int taken, int k) {
  g_autoptr(GArray) order = wg_order(ir);
  int n = (int)order->len, nfree = n - taken;
  if (nfree <= 0) return g_array_index(order, int, k % n);
  return g_array_index(order, int, (state->cursor + taken + k % nfree) % n);
}
