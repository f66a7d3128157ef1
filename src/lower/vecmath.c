/* vecmath.c - the vector and SFU formulas of the workloads (vecmath.h):
 * LayerNorm, softmax, GELU, in the reference's order of operations
 * (docs/workloads.md). */
#include "vecmath.h"

#include <math.h>

#include "builder.h"

static IrView none(void) { return ir_win(-1, 0, 0, 0, 0); }

/* mean = sum(x)/d; c = x - mean; sq = c*c; rstd = rsqrt(sum(sq)/d + eps):
 * two-pass, in the reference's order. */
void lw_ln_rstd(Ir *ir, int task, IrView x, IrView c, IrView sq, IrView mean, IrView rstd,
                IrProv prov) {
  float inv = 1.0f / (float)x.cols;
  lw_op(ir, task, IR_VRSUM, mean, x, none(), prov);
  lw_opi(ir, task, IR_VMULI, mean, mean, inv, prov);
  lw_op(ir, task, IR_VSUB, c, x, mean, prov);
  lw_op(ir, task, IR_VMUL, sq, c, c, prov);
  lw_op(ir, task, IR_VRSUM, rstd, sq, none(), prov);
  lw_ln_rstd_tail(ir, task, rstd, x.cols, prov);
}

void lw_ln_rstd_tail(Ir *ir, int task, IrView var, int d, IrProv prov) {
  lw_opi(ir, task, IR_VMULI, var, var, 1.0f / (float)d, prov);
  lw_opi(ir, task, IR_VADDI, var, var, (float)WL_LN_EPS, prov);
  lw_opi(ir, task, IR_SRSQRT, var, var, 0, prov);
}

/* h = (x - mean) * rstd * g + b.  Same order as the reference up to FP32
 * rounding. */
void lw_layernorm(Ir *ir, int task, IrView x, IrView h, IrView g, IrView b, IrView tmp,
                  IrView mean, IrView var, IrProv prov) {
  lw_ln_rstd(ir, task, x, h, tmp, mean, var, prov);
  lw_op(ir, task, IR_VMUL, h, h, var, prov);
  lw_op(ir, task, IR_VMUL, h, h, g, prov);
  lw_op(ir, task, IR_VADD, h, h, b, prov);
}

void lw_softmax(Ir *ir, int task, IrView s, IrView m, IrView z, IrProv prov) {
  IrView none = ir_win(-1, 0, 0, 0, 0);
  lw_op(ir, task, IR_VRMAX, m, s, none, prov);
  lw_op(ir, task, IR_VSUB, s, s, m, prov);
  lw_opi(ir, task, IR_SEXP, s, s, 0, prov);
  lw_op(ir, task, IR_VRSUM, z, s, none, prov);
  lw_opi(ir, task, IR_SRECIP, z, z, 0, prov);
  lw_op(ir, task, IR_VMUL, s, s, z, prov);
}

/* out = 0.5 f (1 + tanh(sqrt(2/pi) (f + 0.044715 f^3))), g the temporary;
 * out is g (lw_gelu) or f (lw_gelu_into).  With refinements.gelu_factor
 * the polynomial is factored, c (f + a f^3) = f (c + (a c) f^2): one VEC
 * op fewer (8 instead of 9), the ops the refinement's. */
static void gelu_to(Ir *ir, int task, IrView f, IrView g, IrView out, IrProv prov) {
  gboolean factored = ir->sched.gelu_factor;
  if (factored) prov = ir_prov(ir, "refinements.gelu_factor");
  float c = (float)sqrt(2.0 / G_PI);
  lw_op(ir, task, IR_VMUL, g, f, f, prov);
  if (factored) {
    lw_opi(ir, task, IR_VMULI, g, g, 0.044715f * c, prov);
    lw_opi(ir, task, IR_VADDI, g, g, c, prov);
    lw_op(ir, task, IR_VMUL, g, g, f, prov);
  } else {
    lw_op(ir, task, IR_VMUL, g, g, f, prov);
    lw_opi(ir, task, IR_VMULI, g, g, 0.044715f, prov);
    lw_op(ir, task, IR_VADD, g, g, f, prov);
    lw_opi(ir, task, IR_VMULI, g, g, c, prov);
  }
  lw_opi(ir, task, IR_STANH, g, g, 0, prov);
  lw_opi(ir, task, IR_VADDI, g, g, 1.0f, prov);
  lw_op(ir, task, IR_VMUL, out, g, f, prov);
  lw_opi(ir, task, IR_VMULI, out, out, 0.5f, prov);
}

void lw_gelu(Ir *ir, int task, IrView f, IrView g, IrProv prov) { gelu_to(ir, task, f, g, g, prov); }

void lw_gelu_into(Ir *ir, int task, IrView f, IrView g, IrProv prov) { gelu_to(ir, task, f, g, f, prov); }
