/* ffn_rf.c - P1 `handoff: rf` with resident weights (ffn_rf.h,
 * lw_p1_ffn_rf): the FFN's hidden rows go RF to RF.  Without it W1's owners
 * store GELU(h2 . W1 + b1), N x d_ff floats a layer, to HBM scratch and
 * W2's issuers read it back: 2 x N x d_ff x 4 bytes of HBM traffic a layer
 * (on P1's default shape 65,536 lines, 144 uJ), and W2 starts only once W1
 * has finished.  Here W1 and W2 are one pair of resident stages
 * (resident_owners.c) on disjoint WGs, running together:
 *
 *   W1 owner p (one K shard): its chunks of h2 multicast by the owners
 *     themselves, taking turns (LW_P1_FROM_OWNERS: W1's 32 owners and W2's
 *     32 leave no WG for issuers); per row tile t: bias, GELU in place into
 *     its accumulator, then (after tile t+1's last MMA) the R x P block
 *     `ST wgN.a<b>` into buffer b of each W2 owner of the K shard holding
 *     W2's rows p*P.., and SIG that buffer full;
 *   W2 owner (s, q): its A buffers filled by those STs (LW_P1_FROM_STAGE):
 *     WAIT full, MMA, SIG free as with multicast; its K shards summed RF to
 *     RF, bias, residual, store, as before.
 *
 * So a W1 panel must be one W2 A chunk (panels.w1 = k_chunk.w2) and W1 has
 * one K shard.  A W1 owner waits for a W2 buffer only at the end of a tile,
 * when every W1 owner hands off: the wait depends on the hand-offs of
 * lower-numbered panels at that same point, never on a chunk of h2 the
 * waiting owner has still to issue (resident_owners.c, owner()).
 *
 * Not handoff.c's LwHand (D1's rows RF to RF): here the consumer is a
 * resident owner stage with a ring of A buffers, so the hand-off is paced
 * by its full/free events (resident_owners.c) instead of appended stores. */
#include "ffn_rf.h"

#include "builder.h"
#include "resident_owners.h"
#include "vecmath.h"

typedef struct Ffn {
  Ir *ir;
  LwP1Res *w2;
  int R, P;
  int task, tmp; /* the GELU temporary of the owner being written */
  IrProv prov, gelu_prov;
} Ffn;

/* W1's finish: acc = GELU(acc), the same operations as lw_gelu into a
 * temporary but the last two into acc, which stays unchanged until tile
 * t+2 (the STs read it after tile t+1).  In two halves of R/2 rows: the
 * temporary (16 x 32 on P1's default shape) then shares a partition with
 * the bias and rstd, and a 4th A buffer fits beside three accumulators and
 * the 256 x 32 weights (a whole-tile one left 3: h2's ring 2 chunks ahead
 * instead of 3; best.yaml with handoff: rf, handoff_fanout: 2: 146,954 ->
 * 142,178 cycles). */
static void w1_finish(void *ctx, int task, const char *tag, int tile, int c0, IrView acc) {
  (void)tile, (void)c0;
  Ffn *f = ctx;
  Ir *ir = f->ir;
  int h = f->R % 2 ? f->R : f->R / 2; /* in two halves: the temporary shares a partition */
  if (f->task != task) f->task = task, f->tmp = lw_rf_sub(ir, task, tag, "gelu", h, f->P);
  IrView g = ir_all(ir, f->tmp);
  for (int r0 = 0; r0 < f->R; r0 += h) {
    IrView part = ir_win(acc.t, acc.r0 + r0, h, acc.c0, acc.cols);
    lw_gelu_into(ir, task, part, g, f->gelu_prov); /* refinements.gelu_factor: vecmath.c */
  }
}

/* W1's hand-off of tile `tile` (acc: its GELU) to W2's owners. */
static void w1_post(void *ctx, int task, const char *tag, int tile, int c0, IrView acc) {
  (void)tag;
  Ffn *f = ctx;
  lw_p1_resident_feed(f->ir, f->w2, task, tile, c0, acc, f->prov);
}

/* Where W1 owner (columns c0..) hands off in its tile loop of nk chunks:
 * at the place of its block among W2's chunks, so that W2's owners get
 * their chunks in order, one at a time, as they multiply them. */
static int w1_post_at(void *ctx, int c0, int nk) {
  Ffn *f = ctx;
  int nk2, k2 = lw_p1_resident_chunk(f->w2, c0, &nk2);
  return (int)((int64_t)k2 * nk / nk2);
}

gboolean lw_p1_ffn_rf(Ir *ir, LwP1State *state, const LwP1Resident *w1, const LwP1Resident *w2, IrProv prov,
                      GError **err) {
  if (!w1->multicast) {
    ir_error(ir, err, prov, "handoff: rf needs multicast.w1: true (W1's owners multicast h2 to each other)");
    return FALSE;
  }
  if (w1->shards != 1) {
    ir_error(ir, err, ir_prov(ir, "k_split.w1"),
             "k_split.w1=%d: with handoff: rf a W1 owner hands off whole sums, so W1 has one K shard",
             w1->shards);
    return FALSE;
  }
  int kc2 = MIN(w2->pj->k_chunk, w2->K / w2->shards);
  if (w1->pj->panel != kc2) {
    ir_error(ir, err, ir_prov(ir, "panels.w1"),
             "panels.w1=%d: with handoff: rf a W1 panel is one W2 A chunk, so it must equal k_chunk.w2 (%d)",
             w1->pj->panel, kc2);
    return FALSE;
  }
  Ffn f = {.ir = ir, .R = w1->R, .P = w1->pj->panel, .task = -1, .tmp = -1, .prov = prov,
           .gelu_prov = w1->a.prov};
  LwP1Resident a = *w1, b = *w2;
  a.from = LW_P1_FROM_OWNERS, a.finish = w1_finish, a.post = w1_post, a.post_at = w1_post_at, a.ctx = &f, a.extra = 1, a.extra_rows = w1->R % 2 ? 0 : w1->R / 2;
  b.multicast = TRUE, b.from = LW_P1_FROM_STAGE;
  /* handoff_fanout (fanout.c): W1 stores into that many W2 owners of a
   * shard, which forward along chains */
  b.fanout = ir->sched.handoff_fanout, b.fanout_prov = ir_prov(ir, "handoff_fanout");
  /* handoff_hop_flow (fanout.c): a free event per owner, waited per store */
  b.hop_flow = ir->sched.handoff_hop_flow, b.hop_prov = ir_prov(ir, "handoff_hop_flow");
  if (b.hop_flow && b.fanout >= w2->N / w2->pj->panel) {
    ir_error(ir, err, b.hop_prov,
             "handoff_hop_flow: handoff_fanout=%d stores every block into all %d W2 owners of its K shard: "
             "there are no chains to pace hop by hop (handoff_fanout below %d)",
             b.fanout, w2->N / w2->pj->panel, w2->N / w2->pj->panel);
    return FALSE;
  }
  if (b.fanout > w2->N / w2->pj->panel) {
    ir_error(ir, err, b.fanout_prov,
             "handoff_fanout=%d: a W1 block goes to the %d W2 owners of its K shard (d_model / panels.w2), "
             "so at most %d chains",
             b.fanout, w2->N / w2->pj->panel, w2->N / w2->pj->panel);
    return FALSE;
  }
  LwP1Res *r1 = lw_p1_resident_open(ir, state, &a, 0, err);
  if (!r1) return FALSE;
  LwP1Res *r2 = lw_p1_resident_open(ir, state, &b, lw_p1_resident_wgs(r1), err);
  if (!r2) {
    lw_p1_resident_close(r1, state);
    return FALSE;
  }
  f.w2 = r2;
  lw_p1_resident_build(r1, state);
  lw_p1_resident_build(r2, state);
  lw_p1_resident_close(r1, state);
  lw_p1_resident_close(r2, state);
  return TRUE;
}
