/* resident_owners.h - P1's resident weights: a projection stage as owner tasks
 * that each keep one (K shard, panel) and multiply every row tile by it
 * (resident_owners.c). */
#ifndef TCC_LOWER_RESIDENT_OWNERS_H
#define TCC_LOWER_RESIDENT_OWNERS_H

#include "project.h"
#include "tile_sync.h"
#include "layernorm.h"

/* P1 weight reuse by output-column split (resident_owners.c, p1 weights:
 * resident): one projection stage of one layer as one owner task per (K
 * shard, panel), pinned to its own WG, that loads its weights once and
 * multiplies every row tile by them; A reaches the owners chunk by chunk,
 * multicast or loaded by each.  `finish` gets each tile's R x P result (the
 * bias and the K shards' partial sums added) to finish and store: it is the
 * lowering's, as for streamed weights. */
typedef void (*LwTileFinish)(void *ctx, int task, const char *tag, int tile, int c0, IrView acc);
/* Where a multicast stage's A chunks come from: issuer tasks on WGs of
 * their own (the default); the owners themselves, taking turns by chunk
 * (LD.mc; for a stage that leaves no WG spare); or another stage's owners,
 * which put their results straight into the owners' buffers
 * (lw_p1_resident_feed: P1 `handoff: rf`, ffn_rf.c). */
/* LW_P1_FROM_PASS (multicast.pass): each owner loads its own chunks as
 * multicast candidates (IR_MOD_CAND), which the multicast pass merges into
 * LD.mc from issuer tasks of its own (multicast.c). */
typedef enum { LW_P1_FROM_ISSUERS = 0, LW_P1_FROM_OWNERS, LW_P1_FROM_STAGE, LW_P1_FROM_PASS } LwP1Source;

typedef struct LwP1Resident {
  const char *name;       /* the projection: "qkv", "wo", "w1", "w2"        */
  /* panel_groups.PROJ (p1.c): one group of the stage's panels, its columns
   * col0 .. col0+N of the projection's ld (0: N) columns, its tasks and
   * events named `unit` ("qkv_g1"; NULL: name) */
  const char *unit;
  int col0, ld;
  int layer, stage;
  IrRole role;            /* kind and layer (panel, kshard set per owner)   */
  const LwProj *pj;       /* panel width P, k_chunk = A chunk columns       */
  int K, N, shards;       /* reduction, output columns, K shards (k_split)  */
  int tiles, R;           /* row tiles of R rows                            */
  int extra;              /* R x P tensors `finish` keeps (GELU, residual)  */
  int extra_rows;         /* their rows, when fewer than R (0: R)           */
  gboolean multicast;     /* A by LD.mc from one issuer per shard            */
  LwP1Source from;        /* with multicast: who issues A's chunks          */
  LwSource a;             /* A: sym, col (of K's first column), stride, prov */
  const int *part_col;    /* shards > 1: scratch columns of shard 1.. partials */
  int part_stride;        /*   (matrices of part_stride floats a row)         */
  int after, grp;         /* the group waited for (-1: none) and completed  */
  /* chain_last: with K shards (and multicast), the last shard starts the
   * sum with the bias and `res` (R x P of res.sym at rows t*R.., columns
   * res.col + p*P.., when res.sym is set), which `finish` then leaves out,
   * and shard s takes its part of the sum (S-1-s)/S of the way into the
   * next tile, after the shard above has sent it */
  gboolean chain_last;
  LwSource res;
  LwTileFinish finish;
  LwTileFinish post;      /* or NULL: tile t's hand-off (acc: its finished  */
                          /* result), emitted whole in tile t+2 after chunk */
  int (*post_at)(void *ctx, int c0, int nk); /* post_at(c0) of its nk      */
  void *ctx;
  IrProv prov, mc_prov;   /* "weights", "multicast.PROJ"                    */
  /* the K shards' chain of partial sums (k_split.PROJ), and the last
   * shard's start of it with the bias (k_split_last.PROJ) */
  IrProv split_prov, last_prov;
  /* tile_sync (tile_sync.c): the issuers wait for these tile events of
   * the previous stage instead of its group `after` (stage NULL: the group);
   * publish: the finishing owners signal this stage's tile events */
  LwP1TileSync wait_tiles;
  gboolean publish_tiles;
  IrProv sync_prov;       /* "tile_sync.PROJ"                               */
  const LwP1LnFold *fold; /* refinements.ln_fold (ln_fold_centred.c), or NULL   */
  /* LW_P1_FROM_STAGE: the owners' order of the row tiles (round i is tile
   * tile_order[i]; NULL: 0, 1, ..), that in which the feeding stage
   * finishes them (attention_wo.c) */
  const int *tile_order;
  /* LW_P1_FROM_STAGE: a feed stores into `fanout` owners of the shard,
   * which forward along chains (fanout.c); 0: into every owner */
  int fanout;
  IrProv fanout_prov;     /* "handoff_fanout"                               */
  /* with fanout: each owner's own free events, each store into an owner
   * waits for that owner's (fanout.c) */
  gboolean hop_flow;
  IrProv hop_prov;        /* "handoff_hop_flow"                             */
} LwP1Resident;
/* What one resident stage leaves to the next (start it zeroed, prev_after
 * -1): where its owners start in the placer's SM-interleaved order of WGs,
 * so that stages spread over the SMs, and, after a multicast stage, what
 * the next stage's owners pace their weight loads by: its shard 0 `full`
 * events, buffers and chunks, and the group it waited for. */
typedef struct LwP1State {
  int cursor;
  char prev_stage[32];    /* "l0_w1_k0" ("": no multicast stage before) */
  int prev_nb, prev_total, prev_after;
  gboolean prev_pass;     /* its chunks merged by the multicast pass: its */
                          /* shard 0 events are the pass's l0_w1_k0_aB_full */
} LwP1State;
/* Make the stage's owner (and issuer) tasks; FALSE with an error at the
 * knob when an owner does not fit its WG or the stage has more owners than
 * the SMs used have WGs. */
gboolean lw_p1_resident_stage(Ir *ir, LwP1State *state, const LwP1Resident *st, GError **err);
/* The WGs the owners of stage `st` will take, from state->cursor on; and
 * the k-th (cyclically) of the others: where the tasks of the stage before
 * it go, so that its owners can start during that stage (its issuers wait
 * for that stage anyway). */
int lw_p1_resident_owners(const Ir *ir, const LwP1Resident *st);
int lw_p1_free_wg(const Ir *ir, const LwP1State *state, int taken, int k);
/* The same in three steps, for stages built together (ffn_rf.c): open
 * makes the owner tasks and their tensors on the WGs `skip` places after
 * state->cursor (NULL with an error when they do not fit); build writes
 * the owners' (and issuers') programs; close advances the state past the
 * stage and frees it.  Open every stage of a group, then build them, then
 * close them in order: build reads the state the group started from. */
typedef struct LwP1Res LwP1Res;
LwP1Res *lw_p1_resident_open(Ir *ir, const LwP1State *state, const LwP1Resident *st, int skip, GError **err);
void lw_p1_resident_build(LwP1Res *r, const LwP1State *state);
void lw_p1_resident_close(LwP1Res *r, LwP1State *state);
/* The WGs a stage's owners and issuers take. */
int lw_p1_resident_wgs(const LwP1Res *r);
/* In `task` (an owner of another stage), put v (R x k_chunk of the open
 * stage `to`, whose A comes LW_P1_FROM_STAGE) into the buffers of the
 * owners that multiply A's columns col.. of row tile `tile`: wait until
 * they have started (the first round) or freed the buffer, ST it to each,
 * SIG the buffer full.  Each chunk of `to`'s A must be put exactly once. */
void lw_p1_resident_feed(Ir *ir, const LwP1Res *to, int task, int tile, int col, IrView v, IrProv prov);
/* Which of its K shard's nk chunks of a row tile column col of `r`'s A is. */
int lw_p1_resident_chunk(const LwP1Res *r, int col, int *nk);

#endif
