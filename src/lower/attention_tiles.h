/* attention_tiles.h - P1's causal attention with K/V blocks shared by groups of
 * query tiles (attention_tiles.c). */
#ifndef TCC_LOWER_ATTENTION_TILES_H
#define TCC_LOWER_ATTENTION_TILES_H

#include "tile_sync.h"

/* P1 causal attention with K/V blocks shared by the query tiles of a group
 * (attention_tiles.c, attention.query_tiles > 1): one task per (sequence,
 * head, group of `group` row tiles of R rows, folded for equal causal
 * work) loads each K/V block once for all its tiles.  q of head h from
 * qsym (rows of the sequence, columns q_col + 32h.., stride), K/V rows
 * [seq][head][row][32] of ksym/vsym, the output to osym like q. */
typedef struct LwP1Attention {
  int layer, stage;
  int seqs, heads, rows, R, group;
  int waves;               /* the tasks start in waves (attention.waves)   */
  int64_t stagger;         /* and, in a wave, this many cycles apart        */
  const char *qsym, *osym, *ksym, *vsym;
  int q_col, o_col, stride;
  gboolean packed;         /* q and the output packed (LwMat)             */
  int after, grp;          /* the group waited for (-1: none) and completed */
  int interleave;          /* tiles whose op chains interleave (attention.interleave) */
  gboolean kv_resident;    /* K/V loaded once, whole (attention.kv: resident) */
  gboolean kv_shared;      /* K/V blocks multicast to a head's tasks (attention.kv: shared) */
  gboolean staged;         /* with kv_resident: staged softmax (attention.softmax) */
  IrProv prov, group_prov, waves_prov, stagger_prov; /* (stores: lw_space) */
  IrProv interleave_prov, kv_prov, softmax_prov;
  LwP1AttSync sync;        /* attention.tile_sync (tile_sync.c)          */
  gboolean publish_tiles;  /* tile_sync.wo: each stored row tile signals   */
  IrProv publish_prov;     /* its event lL_att_t<t> ("tile_sync.wo")       */
  /* attention.handoff: rf (attention_wo.c): when set, each finished tile o
   * (R x 32 of head h, row tile `tile` of all N rows) goes to deliver
   * instead of HBM */
  void (*deliver)(void *ctx, int task, int tile, int col, IrView o);
  void *deliver_ctx;
} LwP1Attention;
/* FALSE with an error at attention.kv when the resident K/V and the
 * tiles' state do not fit a WG's RF. */
gboolean lw_p1_attention_stage(Ir *ir, const LwP1Attention *at, GError **err);
/* The order in which the tasks of `at` (query_tiles > 1) finish their row
 * tiles, round by round: every task's first tile (sequence by sequence,
 * group by group), then every task's second, ...: seqs x rows / R tiles
 * (global row tile indices) into order. */
void lw_p1_attention_tile_order(const LwP1Attention *at, int *order);

#endif
