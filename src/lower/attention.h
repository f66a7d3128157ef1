/* attention.h - the attention core of both problems (attention.c): keys
 * streamed in blocks with an online softmax, or resident; the merge of
 * attention slices; the fit test that chooses between them. */
#ifndef TCC_LOWER_ATTENTION_H
#define TCC_LOWER_ATTENTION_H

#include "ir.h"

/* Attention of one query block against `keys` keys streamed in blocks
 * (attention.c): q (R x 32) is loaded; K and V rows row0.. of `ksym`/`vsym`
 * (32 floats a row); `mask` (R x R, or absent: t = -1) is added to the
 * scores of the last block, which then must be R keys wide; o (R x 32)
 * gets softmax(q K^T * scale) V through an online softmax. */
/* The softmax scale 1/sqrt(WL_HEAD_DIM), rounded to FP32 once. */
float lw_att_scale(void);
#define LW_MASKED (-1e30f) /* a masked score: exp(LW_MASKED - max) is 0 */
typedef struct LwAttention {
  IrView q, o, mask;
  const char *ksym, *vsym;
  int row0, keys, block;
  float scale;
  IrProv prov;
} LwAttention;
/* With `partial` NULL, o ends normalised (divided by the row sum).  Else o
 * is left as u = sum_j exp(s_j - m) V_j and *partial gets the views of the
 * row max m and the row sum z (R x 1): one slice's (m, z, u) for
 * lw_attention_merge. */
typedef struct LwPartial {
  IrView m, z;
} LwPartial;
void lw_attention_blocked(Ir *ir, int task, const char *tag, const LwAttention *at, LwPartial *partial);
/* The same with the keys and values already in the RF (resident K/V): rows
 * row0.. of kres and vres; no loads (ksym/vsym unused). */
void lw_attention_resident(Ir *ir, int task, const char *tag, const LwAttention *at, IrView kres,
                           IrView vres, LwPartial *partial);
/* The merge of S slices of one query row (attention slices): m and z are
 * 1 x S (each slice's row max and row sum), u is S x 32 (each slice's
 * unnormalised output): M = max m, a = exp(m - M), o (1 x 32) = (a . u) /
 * (a . z).  Slices are weighted by exp(m - M), never averaged.  m, z and u
 * are overwritten. */
void lw_attention_merge(Ir *ir, int task, const char *tag, IrView m, IrView z, IrView u, IrView o,
                        IrProv prov);
/* Whether tensors of these n shapes (rows, cols), live at once, fit in
 * `parts` partitions (what a task may fill: the whole RF, or the temp space
 * when resident weights keep the rest): the choice between the whole-row
 * attention and the blocked one. */
gboolean lw_attention_fits(const Ir *ir, const int (*shape)[2], int n, int parts);
/* The key block of lw_attention_blocked for `rows` query rows: the largest
 * of max_block, max_block/2, ... (down to LW_KEY_BLOCK, one MMA block of
 * keys) whose tensors fit the RF. */
#define LW_KEY_BLOCK 32
int lw_attention_block(const Ir *ir, int rows, int keys, int max_block, int parts);

#endif
