/* attention_tiles.c - P1 causal attention with K/V blocks shared by several
 * query tiles (attention.query_tiles > 1; attention_tiles.h, lw_p1_attention_stage).
 * One task per (sequence, head, group of g query tiles): the group's tiles
 * are folded so that every group has about the same causal work (g = 2:
 * tiles i and T-1-i), and the task streams the K and V rows its longest tile
 * needs once, in blocks of B keys (double-buffered: block j+1 loads while
 * block j is used by the group's tiles after the first), each block serving every tile of the group that attends
 * to it; blocks above a tile's diagonal are skipped.  Per (tile, block), an
 * online softmax as in attention.c:
 *
 *   s   = (q . K_j^T) * scale  (+ the causal mask on the tile's last R keys)
 *   j=0: m = rowmax(s);  s = exp(s - m);  z = rowsum(s);  o = s . V_j
 *   j>0: mn = max(m, rowmax(s));  a = exp(m - mn);  m = mn;  s = exp(s - m);
 *        z = z*a + rowsum(s);  o = o*a + s . V_j
 *
 * then o /= z and o is stored.  K/V bytes read per (sequence, head) fall
 * from T(T+1)/2 tile blocks to about that over g, and 64 tasks of equal work
 * instead of 128 of unequal work fill the machine.
 *
 * attention.interleave: 2: a task's chains (one per tile and key block)
 * are issued as a software pipeline (pipeline() below), so that one chain's
 * exp (the SM's SFU) and MMAs run while the WG's vector unit works on the
 * next one's scores; two score buffers; each tile's q is scaled once
 * (s = (q*scale) . K^T) instead of every score block.
 *
 * attention.kv: shared: the tasks of one (sequence, head) share its K/V
 * blocks: the one with the most keys loads each once by LD.mc into every
 * task's buffer (Share below): K/V read from HBM once per head.
 *
 * attention.kv: resident: the task loads every K and V block its tiles
 * need once, each in its own partition (block j just before the first tile
 * that needs it), and keeps them for all its tiles, which it computes one
 * after the other (two at a time with interleave: 2): no double buffer, no
 * block loaded twice.  attention.softmax: staged (resident only): a tile's
 * scores against all its blocks first (s: R x n), one row max, one exp pass
 * and one row sum, then P . V block by block: no rescaling, n/R times the
 * RF for s.
 *
 * Apart from attention.c, which it shares the online softmax with, because
 * its unit of work is a group of query tiles sharing each K/V block, which
 * D1 (one query row a step) does not have. */
#include "attention_tiles.h"

#include "attention.h"
#include "builder.h"
#include "spacing.h"
#include "tile_sync.h"

/* The group of tile t among T tiles in groups of g: snake order, so group k
 * takes tiles k and 2G-1-k of every 2G (G = T/g groups). */
static int group_of(int t, int T, int g) {
  int G = T / g, m = t % (2 * G);
  return m < G ? m : 2 * G - 1 - m;
}

void lw_p1_attention_tile_order(const LwP1Attention *at, int *order) {
  int T = at->rows / at->R, G = T / at->group, n = 0;
  for (int q = 0; q < at->group; q++)
    for (int seq = 0; seq < at->seqs; seq++)
      for (int k = 0; k < G; k++) /* the q-th tile (ascending) of group k */
        for (int i = 0, m = 0; i < T; i++)
          if (group_of(i, T, at->group) == k && m++ == q) order[n++] = seq * T + i;
}

/* The key block: the largest multiple of R, up to the sequence, whose two
 * K and two V buffers fit the RF beside the group's q, o, I score buffers,
 * mask and softmax state. */
static int key_block(const Ir *ir, int R, int rows, int g, int I) {
  for (int B = rows; B > R; B -= R) {
    int shape[4 + 4 + 6 * 8][2], n = 0;
    for (int k = 0; k < 2; k++) {
      shape[n][0] = B, shape[n++][1] = WL_HEAD_DIM; /* kb */
      shape[n][0] = B, shape[n++][1] = WL_HEAD_DIM; /* vb */
    }
    for (int k = 0; k < I && k < 4; k++) shape[n][0] = R, shape[n++][1] = B; /* s */
    shape[n][0] = R, shape[n++][1] = R; /* mask */
    for (int q = 0; q < g && q < 8; q++) {
      shape[n][0] = R, shape[n++][1] = WL_HEAD_DIM; /* q */
      shape[n][0] = R, shape[n++][1] = WL_HEAD_DIM; /* o */
      for (int k = 0; k < 4; k++) shape[n][0] = R, shape[n++][1] = 1; /* m z mj alpha */
    }
    if (lw_attention_fits(ir, (const int(*)[2])shape, n, ir->hw.vl)) return B;
  }
  return R;
}

/* One tile's state in a task. */
typedef struct Tile {
  int i, n;          /* tile index in its sequence, keys it attends to */
  IrView q, o, m, z, mj, a;
  IrView s;          /* its score buffer */
} Tile;

/* Tile x block: scores, online softmax, o.  scaled: q carries the softmax
 * scale already (it is scaled by the first block's chain). */
static void tile_block(Ir *ir, int task, Tile *t, IrView kv, IrView vv, IrView mask, int k0, gboolean scaled,
                       IrProv pv) {
  IrView none = ir_win(-1, 0, 0, 0, 0);
  int b = MIN(kv.rows, t->n - k0), R = t->q.rows;
  IrView kb = ir_win(kv.t, kv.r0, b, 0, WL_HEAD_DIM), vb = ir_win(vv.t, vv.r0, b, 0, WL_HEAD_DIM);
  IrView sv = ir_win(t->s.t, 0, R, 0, b);
  if (scaled && k0 == 0) lw_opi(ir, task, IR_VMULI, t->q, t->q, lw_att_scale(), pv);
  IrOp *op = ir_emit(ir, task, IR_MMA);
  op->mods = IR_MOD_Z | IR_MOD_T, op->d = sv, op->a = t->q, op->b = kb, op->prov = pv;
  if (!scaled) lw_opi(ir, task, IR_VMULI, sv, sv, lw_att_scale(), pv);
  if (k0 + b == t->n)
    lw_op(ir, task, IR_VADD, ir_win(t->s.t, 0, R, b - R, R), ir_win(t->s.t, 0, R, b - R, R), mask, pv);
  if (k0 == 0) {
    lw_op(ir, task, IR_VRMAX, t->m, sv, none, pv);
  } else {
    lw_op(ir, task, IR_VRMAX, t->mj, sv, none, pv);
    lw_op(ir, task, IR_VMAX, t->mj, t->mj, t->m, pv);
    lw_op(ir, task, IR_VSUB, t->a, t->m, t->mj, pv);
    lw_opi(ir, task, IR_SEXP, t->a, t->a, 0, pv);
    lw_opi(ir, task, IR_VCOPY, t->m, t->mj, 0, pv);
  }
  lw_op(ir, task, IR_VSUB, sv, sv, t->m, pv);
  lw_opi(ir, task, IR_SEXP, sv, sv, 0, pv);
  if (k0 == 0) {
    lw_op(ir, task, IR_VRSUM, t->z, sv, none, pv);
  } else {
    lw_op(ir, task, IR_VRSUM, t->mj, sv, none, pv);
    lw_op(ir, task, IR_VMUL, t->z, t->z, t->a, pv);
    lw_op(ir, task, IR_VADD, t->z, t->z, t->mj, pv);
    lw_op(ir, task, IR_VMUL, t->o, t->o, t->a, pv);
  }
  op = ir_emit(ir, task, IR_MMA);
  op->mods = k0 == 0 ? IR_MOD_Z : 0, op->d = t->o, op->a = sv, op->b = vb, op->prov = pv;
}

/* A whole tile with a staged softmax over its resident blocks kb[j], vb[j]
 * (t->s is R x n): every score block, one max, one exp, one sum, P . V. */
static void tile_staged(Ir *ir, int task, Tile *t, const IrView *kb, const IrView *vb, IrView mask, IrProv pv) {
  IrView none = ir_win(-1, 0, 0, 0, 0);
  int R = t->q.rows, nb = t->n / R;
  lw_opi(ir, task, IR_VMULI, t->q, t->q, lw_att_scale(), pv);
  for (int j = 0; j < nb; j++) {
    IrOp *op = ir_emit(ir, task, IR_MMA);
    op->mods = IR_MOD_Z | IR_MOD_T, op->d = ir_win(t->s.t, 0, R, j * R, R), op->a = t->q, op->b = kb[j];
    op->prov = pv;
  }
  IrView last = ir_win(t->s.t, 0, R, t->n - R, R);
  lw_op(ir, task, IR_VADD, last, last, mask, pv);
  lw_op(ir, task, IR_VRMAX, t->m, t->s, none, pv);
  lw_op(ir, task, IR_VSUB, t->s, t->s, t->m, pv);
  lw_opi(ir, task, IR_SEXP, t->s, t->s, 0, pv);
  lw_op(ir, task, IR_VRSUM, t->z, t->s, none, pv);
  for (int j = 0; j < nb; j++) {
    IrOp *op = ir_emit(ir, task, IR_MMA);
    op->mods = j == 0 ? IR_MOD_Z : 0, op->d = t->o, op->a = ir_win(t->s.t, 0, R, j * R, R), op->b = vb[j];
    op->prov = pv;
  }
}

/* attention.interleave: 2 - a software pipeline over a task's chains (one
 * per tile and key block; per tile with the staged softmax).  A chain is
 * P (what was emitted since the previous chain: loads; then the scores and
 * the max, up to s - m), E (exp(s - m) on the SM's SFU), Q (the row sum and
 * the rescaling) and M (the P . V MMAs).  The WG issues in order and stalls
 * on a dependency, so chain by chain leaves the vector unit idle during E
 * and M; the pipeline issues P0 E0, then for each next chain P(i) E(i)
 * Q(i-1) M(i-1): chain i's scores and max on the vector unit while chain
 * i-1's exp runs, then chain i-1's row sum and rescaling while chain i's
 * exp runs.  Chains alternate between two score buffers; when P(i)
 * touches what Q(i-1) or M(i-1) writes (or the reverse: the same tile, a
 * store of its o) the two are kept in order. */
typedef struct Chain {
  guint start, exp, tail, end; /* P = [start, exp), E, Q = (exp, tail), M = [tail, end) */
} Chain;

/* Open a chain: it takes the ops emitted since the previous one. */
static void chain_open(const Ir *ir, int task, GArray *chains) {
  Chain c = {0, 0, 0, 0};
  c.start = chains->len ? g_array_index(chains, Chain, chains->len - 1).end : G_MAXUINT;
  if (c.start == G_MAXUINT) c.start = ir_task_at((Ir *)ir, task)->ops->len;
  g_array_append_val(chains, c);
}

/* Close it: E is its last exp into the score buffer s, M its closing MMAs
 * (and a SIG after them: attention.kv: shared's buffer freed). */
static void chain_close(Ir *ir, int task, GArray *chains, int s) {
  GArray *ops = ir_task_at(ir, task)->ops;
  Chain *c = &g_array_index(chains, Chain, chains->len - 1);
  c->end = c->tail = ops->len;
  while (c->tail > c->start && (g_array_index(ops, IrOp, c->tail - 1).kind == IR_MMA ||
                                g_array_index(ops, IrOp, c->tail - 1).kind == IR_SIG))
    c->tail--;
  c->exp = c->tail;
  for (guint i = c->start; i < c->tail; i++) {
    const IrOp *op = &g_array_index(ops, IrOp, i);
    if (op->kind == IR_SEXP && op->d.t == s) c->exp = i;
  }
}

/* Whether any op of [a0, a1) and any of [b0, b1) touch one tensor, one of them
 * writing it (d is written; d, a, b, c are touched). */
static gboolean depends(const IrOp *ops, guint a0, guint a1, guint b0, guint b1) {
  for (guint i = a0; i < a1; i++)
    for (guint j = b0; j < b1; j++) {
      const IrOp *x = &ops[i], *y = &ops[j];
      const int xs[4] = {x->d.t, x->a.t, x->b.t, ir_op_c(x).t}, ys[4] = {y->d.t, y->a.t, y->b.t, ir_op_c(y).t};
      for (int k = 0; k < 4; k++) {
        if (xs[k] >= 0 && (xs[k] == y->d.t)) return TRUE;
        if (ys[k] >= 0 && (ys[k] == x->d.t)) return TRUE;
      }
    }
  return FALSE;
}

/* Reissue the task's chained ops in the pipeline's order (above). */
static void pipeline(Ir *ir, int task, const GArray *chains) {
  if (chains->len < 2) return;
  GArray *ops = ir_task_at(ir, task)->ops;
  const Chain *ch = (const Chain *)(void *)chains->data;
  guint first = ch[0].start, last = ch[chains->len - 1].end, out = first;
  g_autofree IrOp *in = g_memdup2(&g_array_index(ops, IrOp, first), (last - first) * sizeof(IrOp));
  IrOp *src = in - first; /* indexed like ops */
#define PUT(lo, hi) for (guint x = (lo); x < (hi); x++) g_array_index(ops, IrOp, out++) = src[x]
  PUT(ch[0].start, ch[0].exp + 1);
  for (guint i = 1; i < chains->len; i++) {
    const Chain *p = &ch[i - 1], *c = &ch[i];
    if (depends(src, c->start, c->exp + 1, p->exp + 1, p->end)) {
      PUT(p->exp + 1, p->end);
      PUT(c->start, c->exp + 1);
    } else {
      PUT(c->start, c->exp + 1);
      PUT(p->exp + 1, p->tail);
      PUT(p->tail, p->end);
    }
  }
  PUT(ch[chains->len - 1].exp + 1, ch[chains->len - 1].end);
#undef PUT
}

/* mask (R x R) = 0 on and below the diagonal, LW_MASKED above. */
static void causal_mask(Ir *ir, int task, IrView mask, IrProv pv) {
  IrOp *op = ir_emit(ir, task, IR_VFILL);
  op->d = mask, op->imm = LW_MASKED, op->prov = pv;
  for (int r = 0; r < mask.rows; r++) {
    op = ir_emit(ir, task, IR_VFILL);
    op->d = ir_win(mask.t, r, 1, 0, r + 1), op->imm = 0.0f, op->prov = pv;
  }
}

/* The tiles of group k: their q, o and softmax state; returns how many,
 * *keys the keys the longest attends to. */
static int group_tiles(Ir *ir, int task, const char *tag, const LwP1Attention *at, int k, Tile *tl, int *keys) {
  int R = at->R, T = at->rows / R, nt = 0;
  *keys = 0;
  for (int i = 0; i < T; i++) {
    if (group_of(i, T, at->group) != k) continue;
    char what[16];
    Tile *t = &tl[nt];
    t->i = i, t->n = (i + 1) * R;
    *keys = MAX(*keys, t->n);
    g_snprintf(what, sizeof what, "q%d", nt);
    t->q = ir_all(ir, lw_rf_sub(ir, task, tag, what, R, WL_HEAD_DIM));
    g_snprintf(what, sizeof what, "o%d", nt);
    t->o = ir_all(ir, lw_rf_sub(ir, task, tag, what, R, WL_HEAD_DIM));
    IrView *st[4] = {&t->m, &t->z, &t->mj, &t->a};
    const char *nm[4] = {"m", "z", "mj", "alpha"};
    for (int x = 0; x < 4; x++) {
      g_snprintf(what, sizeof what, "%s%d", nm[x], nt);
      *st[x] = ir_all(ir, lw_rf_sub(ir, task, tag, what, R, 1));
    }
    nt++;
  }
  return nt;
}

/* o /= z, then the tile's store (after the stage's store spacing: lw_space). */
static void tile_store(Ir *ir, int task, const LwP1Attention *at, const LwMat *om, int seq, int h, Tile *t) {
  lw_opi(ir, task, IR_SRECIP, t->z, t->z, 0, at->prov);
  lw_op(ir, task, IR_VMUL, t->o, t->o, t->z, at->prov);
  lw_space(ir, task);
  if (at->deliver) { /* attention.handoff: rf (attention_wo.c): into wo's owners, not HBM */
    at->deliver(at->deliver_ctx, task, (seq * at->rows + t->i * at->R) / at->R, h * WL_HEAD_DIM, t->o);
    return;
  }
  lw_store_mat(ir, task, t->o, at->osym, om, seq * at->rows + t->i * at->R, h * WL_HEAD_DIM, at->prov);
  /* tile_sync.wo (tile_sync.c): wo's issuers wait for this row tile's
   * event, complete once every head's task has stored its part */
  if (at->publish_tiles)
    lw_p1_tile_signal(ir, task, at->layer, "att", (seq * at->rows + t->i * at->R) / at->R, at->publish_prov);
}

/* The first tile of tl that attends to key k0. */
static int first_active(const Tile *tl, int nt, int k0) {
  for (int q = 0; q < nt; q++)
    if (tl[q].n > k0) return q;
  return nt;
}

/* One attention task: its tiles and its key block buffers. */
typedef struct AttTask {
  int task, k, nt, keys;
  int waited;        /* attention.tile_sync: the last qkv tile waited for */
  int64_t delay;     /* ... and its stagger, once its last q tile is in   */
  gboolean staggered;
  char *tag;
  Tile tl[8];
  IrView kb[2], vb[2];
} AttTask;

/* attention.kv: shared - the tasks of one (sequence, head) share its K/V
 * blocks: the one with the most keys (the leader) loads each block once by
 * LD.mc into the same-named buffer of every task that attends to it, and
 * signals it full; each other task waits for it and signals the buffer freed
 * after its last use.  Events per (sequence, head) and buffer; and `ready`,
 * which each other task signals at its start, before which no LD.mc may
 * write into its RF (its WG may still run an earlier task there). */
typedef struct Share {
  const AttTask *all;
  int n, leader, B;
  char *full[2], *freed[2], *ready;
} Share;

/* Followers' freed signals on buffer jj % 2 before block jj goes in. */
static int64_t freed_before(const Share *sh, int jj) {
  int64_t n = 0;
  for (int f = 0; f < sh->n; f++)
    if (f != sh->leader)
      for (int j = jj % 2; j <= jj - 2; j += 2) n += j * sh->B < sh->all[f].keys;
  return n;
}

/* The leader loads block j (rows [k0, k0+b)) into buffer j % 2 of every
 * task that attends to it. */
static void share_load(Ir *ir, const LwP1Attention *at, const Share *sh, int kv_row, int j, int k0, int b) {
  const AttTask *me = &sh->all[sh->leader];
  if (j == 0 && sh->n > 1) lw_wait(ir, me->task, sh->ready, sh->n - 1, at->kv_prov); /* every one started */
  if (j >= 2) {
    int64_t n = freed_before(sh, j);
    if (n > 0) lw_wait(ir, me->task, sh->freed[j % 2], n, at->kv_prov);
  }
  for (int kv = 0; kv < 2; kv++) {
    const IrView *buf = kv ? me->vb : me->kb;
    lw_load(ir, me->task, ir_win(buf[j % 2].t, 0, b, 0, WL_HEAD_DIM), kv ? at->vsym : at->ksym, kv_row + k0, 0,
            WL_HEAD_DIM, at->kv_prov);
    GArray *ops = ir_task_at(ir, me->task)->ops;
    IrOp *op = &g_array_index(ops, IrOp, ops->len - 1);
    int nt = 0;
    for (int f = 0; f < sh->n; f++) nt += sh->all[f].keys > k0;
    op->mods |= IR_MOD_MC;
    op->ntargets = nt;
    op->targets = g_new(int, nt);
    for (int f = 0, x = 0; f < sh->n; f++)
      if (sh->all[f].keys > k0) op->targets[x++] = (kv ? sh->all[f].vb : sh->all[f].kb)[j % 2].t;
  }
  lw_sig(ir, me->task, sh->full[j % 2], at->kv_prov);
}

/* attention.tile_sync: wait for the qkv tile of row last_row of sequence
 * seq (tile_sync.c), then, once the task's last q tile is in, its
 * stagger: a sequence's tasks all wait for its last tiles, so a stagger at
 * their start would be spent before the data lands and they would run,
 * and store, together. */
static void sync_wait(Ir *ir, const LwP1Attention *at, AttTask *me, int seq, int last_row) {
  lw_p1_att_sync_wait(ir, &at->sync, me->task, seq, last_row, &me->waited);
  int need = (seq * at->rows + me->tl[me->nt - 1].i * at->R + at->R - 1) / at->R;
  if (at->sync.on && !me->staggered && me->waited >= need) {
    me->staggered = TRUE;
    if (me->delay > 0) lw_waitt(ir, me->task, me->delay, at->stagger_prov);
  }
}

/* attention.tile_sync: is tile q of task me beyond the qkv tiles it has
 * waited for (its q then loaded late, after its wait)? */
static gboolean late_q(const LwP1Attention *at, const AttTask *me, int seq, int q) {
  return at->sync.on && (seq * at->rows + me->tl[q].i * at->R + at->R - 1) / at->R > me->waited;
}

/* attention.kv: streamed: blocks of B keys, each loaded once (the next one
 * before this one is used) for every tile of the group that attends to it
 * (shared: once for every task of the sequence and head, by the leader).
 * With attention.interleave: 2 the tiles' chains go through the pipeline
 * (two score buffers, q scaled once) and each next block's loads come after
 * the block's first chain. */
static void streamed_task(Ir *ir, const LwP1Attention *at, int seq, int h, AttTask *me, const Share *sh,
                          const char *go) {
  int R = at->R, I = at->interleave > 1 ? 2 : 1, B = key_block(ir, R, at->rows, at->group, I);
  int kv_row = (seq * at->heads + h) * at->rows, task = me->task, nt = me->nt, keys = me->keys;
  const char *tag = me->tag;
  Tile *tl = me->tl;
  gboolean piped = I > 1, leader = sh && me == &sh->all[sh->leader];
  IrProv pv = at->prov;
  LwMat qm = {at->q_col, at->stride, at->packed}, om = {at->o_col, at->stride, at->packed};
  IrView *kb = me->kb, *vb = me->vb, s[2];
  g_autoptr(GArray) chains = g_array_new(FALSE, FALSE, sizeof(Chain));
  gboolean qlate[8] = {FALSE}; /* attention.tile_sync: q tiles loaded late (late_q) */
  if (sh && !leader) lw_sig(ir, task, sh->ready, at->kv_prov);
  if (!sh)
    for (int x = 0; x < 2; x++) {
      char what[8];
      g_snprintf(what, sizeof what, "kb%d", x);
      kb[x] = ir_all(ir, lw_rf_sub(ir, task, tag, what, B, WL_HEAD_DIM));
      g_snprintf(what, sizeof what, "vb%d", x);
      vb[x] = ir_all(ir, lw_rf_sub(ir, task, tag, what, B, WL_HEAD_DIM));
    }
  for (int x = 0; x < I; x++) {
    char what[8];
    g_snprintf(what, sizeof what, piped ? "s%d" : "s", x);
    s[x] = ir_all(ir, lw_rf_sub(ir, task, tag, what, R, B));
  }
  IrView mask = ir_all(ir, lw_rf_sub(ir, task, tag, "mask", R, R));
  causal_mask(ir, task, mask, pv);
  /* the loads spread over the first block: each tile's q just before the
   * tile before it is computed (a task's loads all at its start make the
   * stage's first microseconds the hottest of P1) */
  for (int k0 = 0, j = 0; k0 < keys; k0 += B, j++) {
    int b = MIN(B, keys - k0), last = -1;
    IrView kv = ir_win(kb[j % 2].t, 0, b, 0, WL_HEAD_DIM), vv = ir_win(vb[j % 2].t, 0, b, 0, WL_HEAD_DIM);
    for (int q = 0; q < nt; q++)
      if (tl[q].n > k0) last = q;
    if (j == 0) {
      sync_wait(ir, at, me, seq, tl[0].i * R + R - 1);
      lw_load_mat(ir, task, tl[0].q, at->qsym, &qm, seq * at->rows + tl[0].i * R, h * WL_HEAD_DIM, pv);
      if (!sh || leader) sync_wait(ir, at, me, seq, b - 1);
      if (!sh) {
        lw_load(ir, task, kv, at->ksym, kv_row, 0, WL_HEAD_DIM, pv);
        lw_load(ir, task, vv, at->vsym, kv_row, 0, WL_HEAD_DIM, pv);
      } else if (leader) {
        share_load(ir, at, sh, kv_row, 0, 0, b);
      }
    }
    if (sh && !leader) lw_wait(ir, task, sh->full[j % 2], j / 2 + 1, at->kv_prov);
    for (int q = 0; q < nt; q++) {
      /* attention.tile_sync: a q tile whose rows are not yet waited for is
       * loaded (after its wait) just before its own chain, not one ahead */
      if (j == 0 && q > 0 && qlate[q]) {
        sync_wait(ir, at, me, seq, tl[q].i * R + R - 1);
        lw_load_mat(ir, task, tl[q].q, at->qsym, &qm, seq * at->rows + tl[q].i * R, h * WL_HEAD_DIM, pv);
      }
      if (j == 0 && q + 1 < nt && !(qlate[q + 1] = late_q(at, me, seq, q + 1)))
        lw_load_mat(ir, task, tl[q + 1].q, at->qsym, &qm, seq * at->rows + tl[q + 1].i * R, h * WL_HEAD_DIM, pv);
      gboolean first = FALSE;
      if (tl[q].n > k0) {
        tl[q].s = s[chains->len % I];
        if (piped) chain_open(ir, task, chains);
        tile_block(ir, task, &tl[q], kv, vv, mask, k0, piped, pv);
        if (sh && !leader && q == last) lw_sig(ir, task, sh->freed[j % 2], at->kv_prov); /* done with it */
        if (piped) chain_close(ir, task, chains, tl[q].s.t);
        first = piped && q == first_active(tl, nt, k0);
        /* attention.handoff: rf: a tile goes to wo once its last block is in */
        if (at->deliver && k0 + B >= tl[q].n) tile_store(ir, task, at, &om, seq, h, &tl[q]);
      }
      /* the next block, once this one is in use (piped: by its first chain) */
      if ((piped ? first : q == 0) && k0 + B < keys && (!sh || leader)) {
        int nb = MIN(B, keys - k0 - B);
        sync_wait(ir, at, me, seq, k0 + B + nb - 1);
        if (sh) {
          share_load(ir, at, sh, kv_row, j + 1, k0 + B, nb);
        } else {
          lw_load(ir, task, ir_win(kb[(j + 1) % 2].t, 0, nb, 0, WL_HEAD_DIM), at->ksym, kv_row + k0 + B, 0,
                  WL_HEAD_DIM, pv);
          lw_load(ir, task, ir_win(vb[(j + 1) % 2].t, 0, nb, 0, WL_HEAD_DIM), at->vsym, kv_row + k0 + B, 0,
                  WL_HEAD_DIM, pv);
        }
      }
    }
    if (j == 0 && at->waves > 1) lw_sig(ir, task, go, at->waves_prov); /* its first block done */
  }
  pipeline(ir, task, chains);
  for (int q = 0; q < nt && !at->deliver; q++) tile_store(ir, task, at, &om, seq, h, &tl[q]);
}

/* attention.kv: resident: K and V block j (R keys each, one partition at
 * VL16) loaded once, before the first tiles that need it; the tiles in
 * ascending order, I at a time (attention.interleave), the chains of a pair
 * alternating block by block through the pipeline (online softmax: a chain
 * per tile and block; staged: one per tile), then their stores. */
static void resident_task(Ir *ir, const LwP1Attention *at, int seq, int h, AttTask *me, const char *go) {
  int task = me->task, nt = me->nt, keys = me->keys;
  const char *tag = me->tag;
  Tile *tl = me->tl;
  int R = at->R, I = at->interleave > 1 ? 2 : 1, nb = keys / R, loaded = 0;
  int kv_row = (seq * at->heads + h) * at->rows;
  IrProv pv = at->prov;
  LwMat qm = {at->q_col, at->stride, at->packed}, om = {at->o_col, at->stride, at->packed};
  IrView kb[32], vb[32], s[2];
  for (int j = 0; j < nb; j++) {
    char what[8];
    g_snprintf(what, sizeof what, "k%d", j);
    kb[j] = ir_all(ir, lw_rf_sub(ir, task, tag, what, R, WL_HEAD_DIM));
    g_snprintf(what, sizeof what, "v%d", j);
    vb[j] = ir_all(ir, lw_rf_sub(ir, task, tag, what, R, WL_HEAD_DIM));
  }
  for (int x = 0; x < I; x++) {
    char what[8];
    g_snprintf(what, sizeof what, "s%d", x);
    s[x] = ir_all(ir, lw_rf_sub(ir, task, tag, what, R, at->staged ? keys : R));
  }
  IrView mask = ir_all(ir, lw_rf_sub(ir, task, tag, "mask", R, R));
  causal_mask(ir, task, mask, pv);
  for (int q0 = 0; q0 < nt; q0 += I) {
    int n = MIN(I, nt - q0), most = 0;
    g_autoptr(GArray) chains = g_array_new(FALSE, FALSE, sizeof(Chain));
    /* this set's q and the blocks it needs that are not in yet */
    for (int q = q0; q < q0 + n; q++) {
      sync_wait(ir, at, me, seq, tl[q].i * R + R - 1);
      lw_load_mat(ir, task, tl[q].q, at->qsym, &qm, seq * at->rows + tl[q].i * R, h * WL_HEAD_DIM, pv);
      for (; loaded < tl[q].n / R; loaded++) {
        lw_load(ir, task, kb[loaded], at->ksym, kv_row + loaded * R, 0, WL_HEAD_DIM, pv);
        lw_load(ir, task, vb[loaded], at->vsym, kv_row + loaded * R, 0, WL_HEAD_DIM, pv);
      }
      tl[q].s = at->staged ? ir_win(s[q - q0].t, 0, R, 0, tl[q].n) : s[q - q0];
      most = MAX(most, at->staged ? 1 : tl[q].n / R);
    }
    for (int j = 0; j < most; j++)
      for (int q = q0; q < q0 + n; q++) {
        Tile *t = &tl[q];
        if (!at->staged && j * R >= t->n) continue;
        if (I > 1) chain_open(ir, task, chains);
        if (at->staged)
          tile_staged(ir, task, t, kb, vb, mask, pv);
        else
          tile_block(ir, task, t, kb[j], vb[j], mask, j * R, TRUE, pv);
        if (I > 1) chain_close(ir, task, chains, t->s.t);
      }
    pipeline(ir, task, chains);
    if (q0 == 0 && at->waves > 1) lw_sig(ir, task, go, at->waves_prov); /* its first tiles done */
    for (int q = q0; q < q0 + n; q++) tile_store(ir, task, at, &om, seq, h, &tl[q]);
  }
}

/* attention.kv: resident: FALSE with an error at the knob when the keys'
 * K and V blocks with I tiles' q, o, scores and state do not fit the RF. */
static gboolean resident_fits(Ir *ir, const LwP1Attention *at, GError **err) {
  int R = at->R, keys = at->rows, I = at->interleave > 1 ? 2 : 1, shape[2 * 32 + 4 * 7 + 1][2], n = 0;
  for (int j = 0; j < 2 * keys / R && j < 64; j++) shape[n][0] = R, shape[n++][1] = WL_HEAD_DIM; /* k, v */
  for (int x = 0; x < I && x < 4; x++) {
    shape[n][0] = R, shape[n++][1] = WL_HEAD_DIM;        /* q */
    shape[n][0] = R, shape[n++][1] = WL_HEAD_DIM;        /* o */
    shape[n][0] = R, shape[n++][1] = at->staged ? keys : R; /* s */
    for (int k = 0; k < 4; k++) shape[n][0] = R, shape[n++][1] = 1;
  }
  shape[n][0] = R, shape[n++][1] = R; /* mask */
  if (keys / R <= 32 && lw_attention_fits(ir, (const int(*)[2])shape, n, ir->hw.vl)) return TRUE;
  ir_error(ir, err, at->kv_prov,
           "attention.kv=resident: the K and V of %d keys (%d KiB) with the q, o and %s scores of %d tile%s "
           "do not fit a WG's %d KiB RF; use attention.kv: shared (K/V read once per head, streamed), fewer "
           "rows per sequence%s",
           keys, 2 * keys * WL_HEAD_DIM * 4 / 1024, at->staged ? "staged" : "block", I, I == 1 ? "" : "s",
           ir->hw.rf_kib, I > 1 ? " or attention.interleave: 1" : (at->staged ? " or softmax: online" : ""));
  return FALSE;
}

/* Make task k of (seq, h): its dependencies, its wave's WAIT and its
 * stagger, its tiles' tensors (and, shared, its K/V buffers named alike). */
static void task_open(Ir *ir, const LwP1Attention *at, int seq, int h, int k, AttTask *me, gboolean shared) {
  int R = at->R, T = at->rows / R, G = T / at->group;
  me->k = k;
  me->tag = g_strdup_printf("l%d.att.s%d.h%d.g%d", at->layer, seq, h, k);
  IrRole role = ir_role(ROLE_ATT);
  role.layer = at->layer, role.seq = seq, role.head = h;
  int task = me->task = lw_task(ir, me->tag, at->stage, at->kv_resident ? at->kv_prov : at->group_prov, role);
  me->waited = -1;
  if (at->after >= 0 && !at->sync.on) ir_task_waits(ir, task, at->after); /* tile_sync: per tile instead */
  ir_task_signals(ir, task, at->grp);
  /* attention.waves: task n of the stage is in wave n * waves / tasks
   * and starts once every task of the earlier waves is through its
   * first key block, which loads every q (consecutive tasks go to
   * different SMs, so each wave spreads over the machine) */
  int n = (seq * at->heads + h) * G + k, ntasks = at->seqs * at->heads * G;
  int wave = n * at->waves / ntasks, before = 0;
  for (int x = 0; x < ntasks; x++) before += x * at->waves / ntasks < wave;
  g_autofree char *go = g_strdup_printf("l%d_att_go", at->layer);
  if (before > 0) lw_wait(ir, task, go, before, at->waves_prov);
  /* attention.stagger: the tasks of a wave start `stagger` cycles
   * apart, before their first load (their first key blocks and q
   * tiles, all at once, make the stage's start its hottest window) */
  /* attention.tile_sync: a sequence's tasks start together as its q|k|v
   * tiles land (tile_sync.c): staggered within it, once their last q
   * tile is in (sync_wait) */
  me->staggered = FALSE, me->delay = 0;
  if (at->sync.on)
    me->delay = (int64_t)(n - seq * at->heads * G) * at->stagger;
  else if (at->stagger > 0 && n > before)
    lw_waitt(ir, task, (int64_t)(n - before) * at->stagger, at->stagger_prov);
  me->nt = group_tiles(ir, task, me->tag, at, k, me->tl, &me->keys);
  if (shared) {
    int B = key_block(ir, R, at->rows, at->group, at->interleave > 1 ? 2 : 1);
    g_autofree char *kvtag = g_strdup_printf("l%d.att.s%d.h%d", at->layer, seq, h);
    for (int x = 0; x < 2; x++) {
      char what[8];
      g_snprintf(what, sizeof what, "kb%d", x);
      me->kb[x] = ir_all(ir, lw_rf_sub(ir, task, kvtag, what, B, WL_HEAD_DIM));
      g_snprintf(what, sizeof what, "vb%d", x);
      me->vb[x] = ir_all(ir, lw_rf_sub(ir, task, kvtag, what, B, WL_HEAD_DIM));
    }
  }
}

gboolean lw_p1_attention_stage(Ir *ir, const LwP1Attention *at, GError **err) {
  int T = at->rows / at->R, G = T / at->group;
  gboolean shared = at->kv_shared && G > 1;
  if (at->kv_resident && !resident_fits(ir, at, err)) return FALSE;
  g_autofree char *go = g_strdup_printf("l%d_att_go", at->layer);
  g_autofree AttTask *all = g_new0(AttTask, MAX(G, 1));
  for (int seq = 0; seq < at->seqs; seq++)
    for (int h = 0; h < at->heads; h++) {
      if (!shared) {
        for (int k = 0; k < G; k++) {
          task_open(ir, at, seq, h, k, &all[0], FALSE);
          if (at->kv_resident)
            resident_task(ir, at, seq, h, &all[0], go);
          else
            streamed_task(ir, at, seq, h, &all[0], NULL, go);
          g_free(all[0].tag);
        }
        continue;
      }
      Share sh = {.all = all, .n = G, .leader = 0,
                  .B = key_block(ir, at->R, at->rows, at->group, at->interleave > 1 ? 2 : 1)};
      for (int k = 0; k < G; k++) {
        task_open(ir, at, seq, h, k, &all[k], TRUE);
        if (all[k].keys > all[sh.leader].keys) sh.leader = k;
      }
      for (int x = 0; x < 2; x++) {
        sh.full[x] = g_strdup_printf("l%d_att_s%d_h%d_full%d", at->layer, seq, h, x);
        sh.freed[x] = g_strdup_printf("l%d_att_s%d_h%d_freed%d", at->layer, seq, h, x);
      }
      sh.ready = g_strdup_printf("l%d_att_s%d_h%d_ready", at->layer, seq, h);
      for (int k = 0; k < G; k++) streamed_task(ir, at, seq, h, &all[k], &sh, go);
      for (int k = 0; k < G; k++) g_free(all[k].tag);
      for (int x = 0; x < 2; x++) g_free(sh.full[x]), g_free(sh.freed[x]);
      g_free(sh.ready);
    }
  return TRUE;
}
