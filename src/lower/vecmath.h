/* vecmath.h - the vector and SFU formulas of the workloads (vecmath.c):
 * LayerNorm's statistics and LayerNorm, the row softmax, GELU; each emits
 * ops into one task in the reference's order of operations. */
#ifndef TCC_LOWER_VECMATH_H
#define TCC_LOWER_VECMATH_H

#include "ir.h"

/* LayerNorm's statistics of the rows of x (R x d), two-pass as the
 * reference: mean (R x 1) = sum(x) / d, c = x - mean, sq = c * c (R x d; sq
 * may be c), rstd (R x 1) = 1 / sqrt(sum(sq) / d + eps).  lw_ln_rstd_tail:
 * its last step, var (R x 1, the row sums of squares) -> rstd in place. */
void lw_ln_rstd(Ir *ir, int task, IrView x, IrView c, IrView sq, IrView mean, IrView rstd,
                IrProv prov);
void lw_ln_rstd_tail(Ir *ir, int task, IrView var, int d, IrProv prov);
/* h = LayerNorm(x) * g + b over the rows of x (R x d); g, b are 1 x d RF
 * views; `tmp` is R x d scratch, `mean`/`var` R x 1. */
void lw_layernorm(Ir *ir, int task, IrView x, IrView h, IrView g, IrView b, IrView tmp,
                  IrView mean, IrView var, IrProv prov);
/* Row softmax of s (R x n) in place: m = row max, s = exp(s - m),
 * z = 1 / row sum, s *= z; m and z are R x 1 scratch. */
void lw_softmax(Ir *ir, int task, IrView s, IrView m, IrView z, IrProv prov);

/* g = GELU_tanh(f), elementwise; g must not alias f.  With
 * refinements.gelu_factor the polynomial is factored, one VEC op fewer
 * (equal up to FP32 rounding), and the ops cite the refinement, not prov. */
void lw_gelu(Ir *ir, int task, IrView f, IrView g, IrProv prov);
/* f = GELU_tanh(f) through the temporary g: the same operations and
 * rounding as lw_gelu, its last two writing f. */
void lw_gelu_into(Ir *ir, int task, IrView f, IrView g, IrProv prov);

#endif
