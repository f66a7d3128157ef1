/* attention_wo.c - P1 `attention.handoff: rf | relay`: attention's output
 * goes RF to RF into wo's owners (attention_wo.h, lw_p1_att_wo_rf).
 *
 * By default each attention task stores its o tiles (R x 32 of one head)
 * to HBM scratch (att, packed in 32 x 32 blocks) and wo's issuers LD.mc
 * them, chunk by chunk, into the A buffers of the owners of the chunk's K
 * shard: N x d x 4 bytes written and read again a layer (16,384 HBM lines
 * on P1's default shape, ~36 uJ).  Here wo is a resident stage whose A
 * comes LW_P1_FROM_STAGE (resident_owners.c), as W2's with `handoff: rf`, and
 * one head of one row tile is exactly one A chunk (k_chunk.wo = 32).  Wo's
 * owners take the row tiles in the order the attention tasks finish them
 * (lw_p1_attention_tile_order: every task's first tile, then every task's
 * second, ...), and a task hands a tile off as soon as its last key block
 * is in (attention_tiles.c).
 *
 * rf: the attention task itself lw_p1_resident_feed()s the tile: WAIT until
 * the owners of the chunk's K shard have started (the first round) or
 * freed the buffer, `ST wgN.a<b>` into it on each of them (np STs of 4 KiB
 * through its SM's NoC out-link), SIG it full.  The task stalls in those
 * WAITs, and its WG (where W1's owners queue) frees only after its last
 * tile has gone.
 *
 * relay: ni relay tasks per K shard on WGs of their own (where wo's issuers
 * would be), taking turns by chunk as issuers do.  The attention task puts
 * the tile once into a slot of the chunk's relay (`ST wgN.lL_wo_kS_rI_sJ`,
 * after a WAIT for the relay to have started or freed the slot) and SIGs
 * the slot full; the relay WAITs for it, feeds it to the owners as above
 * and SIGs the slot free.  A relay has as many slots as fit its RF (all
 * of its chunks on the default P1), so the attention tasks seldom wait.
 * Events per relay slot (`lL_wo_kS_rI_sJ_full` / `_free`), whose uses cannot
 * overtake each other: the producer of use u waits for the relay to free
 * use u-1, which it does after waiting for that use's full.
 *
 * Liveness: a put may wait for wo to have consumed earlier chunks, which
 * other attention tasks put.  Those must all be running: every attention
 * task of the layer gets a WG of its own with no wo owner or relay on it
 * (checked after placement; error at attention.handoff otherwise), and wo's
 * owners and relays, made first, start before them. */
#include "attention_wo.h"

#include "attention.h"
#include "attention_tiles.h"
#include "builder.h"
#include "resident_owners.h"
#include "tile_sync.h"

enum { ATTWO_RELAYS = 4, ATTWO_SLOTS = 16 };

typedef struct AttWo {
  Ir *ir;
  LwP1Res *wo;
  const LwP1Resident *st;
  const int *order;  /* round -> tile */
  int KS, kc, nk, ni, nslots;
  int *slot;         /* relay tensors: [(s*ni + i)*nslots + k] */
  int *full, *freed; /* their events, alike */
  int *ready;        /* a relay's start: [s*ni + i] */
  IrProv prov;
} AttWo;

static int round_of(const AttWo *aw, int tile) {
  for (int i = 0; i < aw->st->tiles; i++)
    if (aw->order[i] == tile) return i;
  return tile;
}

static void wait_ev(Ir *ir, int task, int ev, int64_t n, IrProv prov) {
  IrOp *op = ir_emit(ir, task, IR_WAIT);
  op->event = ev, op->n = n, op->prov = prov;
}

static void sig_ev(Ir *ir, int task, int ev, IrProv prov) {
  IrOp *op = ir_emit(ir, task, IR_SIG);
  op->event = ev, op->n = 1, op->prov = prov;
}

/* Chunk c of shard s at relay i = c % ni: its use j = c / ni, slot j % nslots, that slot's use u. */
static void deliver(void *ctx, int task, int tile, int col, IrView o) {
  AttWo *aw = ctx;
  Ir *ir = aw->ir;
  if (aw->ni == 0) {
    lw_p1_resident_feed(ir, aw->wo, task, tile, col, o, aw->prov);
    return;
  }
  int s = col / aw->KS, c = round_of(aw, tile) * aw->nk + (col % aw->KS) / aw->kc;
  int i = c % aw->ni, j = c / aw->ni, k = j % aw->nslots, u = j / aw->nslots, x = (s * aw->ni + i) * aw->nslots + k;
  if (u == 0)
    wait_ev(ir, task, aw->ready[s * aw->ni + i], 1, aw->prov);
  else
    wait_ev(ir, task, aw->freed[x], u, aw->prov);
  IrOp *op = ir_emit(ir, task, IR_ST);
  op->a = o, op->mem = ir_all(ir, aw->slot[x]), op->prov = aw->prov;
  sig_ev(ir, task, aw->full[x], aw->prov);
}

/* The relays' tasks and tensors on the WGs after wo's owners: as many
 * slots as fit a relay's RF (it keeps nothing else), up to its chunks. */
static void make_relays(AttWo *aw, const LwP1State *state, int owners) {
  Ir *ir = aw->ir;
  const LwP1Resident *st = aw->st;
  int S = st->shards, per = (st->tiles * aw->nk + aw->ni - 1) / aw->ni; /* chunks a relay feeds */
  for (aw->nslots = MIN(per, ATTWO_SLOTS); aw->nslots > 1; aw->nslots--) {
    int shape[ATTWO_SLOTS][2];
    for (int k = 0; k < aw->nslots; k++) shape[k][0] = st->R, shape[k][1] = aw->kc;
    if (lw_attention_fits(ir, (const int(*)[2])shape, aw->nslots, ir->hw.vl)) break;
  }
  aw->slot = g_new(int, S * aw->ni * aw->nslots);
  aw->full = g_new(int, S * aw->ni * aw->nslots), aw->freed = g_new(int, S * aw->ni * aw->nslots);
  aw->ready = g_new(int, S * aw->ni);
  for (int s = 0; s < S; s++)
    for (int i = 0; i < aw->ni; i++) {
      g_autofree char *tag = g_strdup_printf("l%d.wo.k%d.r%d", st->layer, s, i);
      g_autofree char *ev = g_strdup_printf("l%d_wo_k%d_r%d_ready", st->layer, s, i);
      IrRole role = st->role;
      role.kshard = s;
      int t = lw_task(ir, tag, st->stage, aw->prov, role);
      ir_task_at(ir, t)->pin = lw_p1_free_wg(ir, state, 0, owners + s * aw->ni + i);
      ir_task_signals(ir, t, st->grp);
      aw->ready[s * aw->ni + i] = ir_event(ir, ev);
      sig_ev(ir, t, aw->ready[s * aw->ni + i], aw->prov); /* its slots may be written */
      for (int k = 0; k < aw->nslots; k++) {
        int x = (s * aw->ni + i) * aw->nslots + k;
        char what[8];
        g_snprintf(what, sizeof what, "s%d", k);
        aw->slot[x] = lw_rf_sub(ir, t, tag, what, st->R, aw->kc);
        g_autofree char *f = g_strdup_printf("l%d_wo_k%d_r%d_s%d_full", st->layer, s, i, k);
        g_autofree char *e = g_strdup_printf("l%d_wo_k%d_r%d_s%d_free", st->layer, s, i, k);
        aw->full[x] = ir_event(ir, f), aw->freed[x] = ir_event(ir, e);
      }
    }
}

/* Relay (s, i): its chunks in order, each fed to the owners from its slot. */
static void relay(AttWo *aw, int s, int i, int task) {
  Ir *ir = aw->ir;
  for (int c = i, j = 0; c < aw->st->tiles * aw->nk; c += aw->ni, j++) {
    int k = j % aw->nslots, u = j / aw->nslots, x = (s * aw->ni + i) * aw->nslots + k;
    wait_ev(ir, task, aw->full[x], u + 1, aw->prov);
    int tile = aw->order[c / aw->nk], col = s * aw->KS + (c % aw->nk) * aw->kc;
    lw_p1_resident_feed(ir, aw->wo, task, tile, col, ir_all(ir, aw->slot[x]), aw->prov);
    sig_ev(ir, task, aw->freed[x], aw->prov);
  }
}

/* Is every task from t0 on pinned to a WG of its own, with no task of
 * [t_wo, t0) (wo's owners and relays) on it? */
static gboolean own_wgs(Ir *ir, guint t_wo, guint t0, int *dup) {
  for (guint a = t0; a < ir->tasks->len; a++)
    for (guint b = t_wo; b < a; b++)
      if (ir_task_at(ir, (int)a)->pin == ir_task_at(ir, (int)b)->pin) {
        *dup = ir_task_at(ir, (int)a)->pin;
        return FALSE;
      }
  return TRUE;
}

gboolean lw_p1_att_wo_rf(Ir *ir, LwP1State *state, LwP1Attention *at, const LwP1Resident *wo, gboolean relays,
                         IrProv prov, GError **err) {
  if (!wo->multicast || wo->from != LW_P1_FROM_ISSUERS) {
    ir_error(ir, err, prov,
             "attention.handoff puts attention's tiles into wo's owners' A buffers: it needs multicast.wo "
             "true and wo's chunks not merged by multicast.pass");
    return FALSE;
  }
  if (wo->wait_tiles.stage || at->publish_tiles) {
    ir_error(ir, err, wo->sync_prov,
             "tile_sync.wo: with attention.handoff: rf or relay the attention tasks feed wo's owners "
             "themselves, tile by tile; drop tile_sync.wo");
    return FALSE;
  }
  int kc = MIN(wo->pj->k_chunk, wo->K / wo->shards);
  if (kc != WL_HEAD_DIM || at->R != wo->R) {
    ir_error(ir, err, ir_prov(ir, "k_chunk.wo"),
             "k_chunk.wo=%d: with attention.handoff: rf or relay one head's tile is one wo A chunk, so "
             "k_chunk.wo must be the head width (%d)",
             wo->pj->k_chunk, WL_HEAD_DIM);
    return FALSE;
  }
  /* wo takes the tiles in the order the attention tasks finish them */
  g_autofree int *order = g_new(int, wo->tiles);
  lw_p1_attention_tile_order(at, order);
  LwP1Resident b = *wo;
  b.from = LW_P1_FROM_STAGE, b.tile_order = order;
  guint t_wo = ir->tasks->len;
  LwP1Res *r = lw_p1_resident_open(ir, state, &b, 0, err);
  if (!r) return FALSE;
  int owners = lw_p1_resident_wgs(r), nk;
  lw_p1_resident_chunk(r, 0, &nk);
  AttWo aw = {.ir = ir, .wo = r, .st = &b, .order = order, .KS = wo->K / wo->shards, .kc = kc, .nk = nk,
              .prov = prov};
  int n = 0; /* the placer's WGs */
  while (n == 0 || (n < 4096 && lw_p1_free_wg(ir, state, 0, n) != lw_p1_free_wg(ir, state, 0, 0))) n++;
  int ntasks = at->seqs * at->heads * (at->rows / at->R / at->group);
  if (relays) {
    aw.ni = MIN(ATTWO_RELAYS, (n - owners - ntasks) / wo->shards);
    if (aw.ni < 1) {
      ir_error(ir, err, prov,
               "attention.handoff: relay needs a WG per K shard of wo (%d) besides wo's %d owners and the "
               "%d attention tasks, but the SMs used have %d WGs: use rf, fewer K shards or more SMs",
               wo->shards, owners, ntasks, n);
      lw_p1_resident_close(r, state);
      return FALSE;
    }
    make_relays(&aw, state, owners);
  }
  int taken = owners + wo->shards * aw.ni;
  at->deliver = deliver, at->deliver_ctx = &aw;
  guint t0 = ir->tasks->len;
  gboolean ok = lw_p1_attention_stage(ir, at, err);
  at->deliver = NULL, at->deliver_ctx = NULL;
  if (ok) { /* as keep_clear_att / keep_clear in p1.c, past the relays too */
    if (!at->sync.on || !lw_p1_att_place(ir, state, t0, at->stage - 1, taken, at->seqs - 1))
      for (guint k = t0; k < ir->tasks->len; k++)
        ir_task_at(ir, (int)k)->pin = lw_p1_free_wg(ir, state, taken, (int)(k - t0));
    int dup = -1;
    if (!own_wgs(ir, t_wo, t0, &dup)) {
      ir_error(ir, err, prov,
               "attention.handoff needs a WG for each of the layer's %u attention tasks apart from wo's "
               "owners%s (they wait for each other's tiles through wo), but wg%d has two: raise "
               "attention.query_tiles or use more SMs",
               ir->tasks->len - t0, aw.ni ? " and relays" : "", dup);
      ok = FALSE;
    }
  }
  if (ok) {
    lw_p1_resident_build(r, state);
    for (int s = 0; s < wo->shards; s++)
      for (int i = 0; i < aw.ni; i++) relay(&aw, s, i, (int)t_wo + owners + s * aw.ni + i);
  }
  lw_p1_resident_close(r, state);
  state->cursor = (state->cursor + wo->shards * aw.ni) % n; /* the next stage past the relays, as past issuers */
  if (aw.ni) g_free(aw.slot), g_free(aw.full), g_free(aw.freed), g_free(aw.ready);
  return ok;
}
