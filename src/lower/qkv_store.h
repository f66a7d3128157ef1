/* qkv_store.h - where a q|k|v projection's output goes (qkv_store.c). */
#ifndef TCC_LOWER_QKV_STORE_H
#define TCC_LOWER_QKV_STORE_H

#include "ir.h"
#include "handoff.h"

/* Where a q|k|v projection's output goes: q to scratch (row q_row,
 * columns q_col.., row stride d_model) or into the hand-off `q`; K and V of
 * head h to rows kv_row + h * head_rows of kv_sym[0] / kv_sym[1] (32 floats
 * a row), through the temp area of scratch (row temp_row, columns
 * temp_col.., stride temp_stride), which the kv_writeback pass removes with
 * kv_writeback: direct; the stage's store spacing before each store
 * (lw_space: the store task's and kv_task's roles). */
typedef struct LwQkvStore {
  int d_model;
  int q_row, q_col;
  gboolean q_packed; /* q's scratch matrix packed (LwMat)                    */
  LwHand *q;        /* q goes here (columns 0..d of its matrix) when set     */
  const char *kv_sym[2];
  int kv_row, head_rows;
  /* With resident K/V (kv_writeback: direct only): each head's new K / V row also
   * goes to kv_rf[0 / 1][head] (a 1 x 32 window in another WG's RF), and
   * the HBM stores are issued by task kv_task instead (one made for them,
   * which nothing waits for: they leave the critical path). */
  const IrView *kv_rf[2];
  int kv_task;
  int temp_row, temp_col, temp_stride;
  const char *back_tag; /* names the read-back tensors (NULL: the
                           task's name; a task storing several blocks sets
                           one per block)                                   */
  int *fences;      /* the task's fence count (lw_fence)                    */
  IrProv prov, kv_prov;
} LwQkvStore;
/* Store the panel acc (R x P: columns c0.. of the 3d-wide q|k|v row). */
void lw_store_qkv(Ir *ir, int task, IrView acc, int c0, const LwQkvStore *s);
/* Will the kv_writeback pass remove op (with kv_writeback: direct, a K/V
 * piece's store to the temp area, its fence's SIG and WAIT, its load back)?
 * A lowering that schedules by counting ops (resident_owners.c's epilogue
 * spread) counts those the program keeps. */
gboolean lw_qkv_transient(const Ir *ir, const IrOp *op);

#endif
