/* lower.h - the strategy: the problem section's decisions (the schedule
 * record, ir->sched) turned into tasks, tensors, ops and dependencies.  The
 * first pass of the pass table (`lower`, src/passes/pipeline.c) is
 * pass_lower; the lowerings d1.c and p1.c are skeletons that build each
 * stage from the technique modules of this directory (their headers:
 * builder.h, vecmath.h, project.h, qkv_store.h, handoff.h, resident.h,
 * layernorm.h, attention.h, ...; src/lower/README.md). */
#ifndef TCC_LOWER_H
#define TCC_LOWER_H

#include "ir.h"

/* The problem's lowering: D1 or P1 by ir->prob.kind. */
gboolean pass_lower(Ir *ir, GError **err);
/* d1.c / p1.c: each problem's strategy.  FALSE with an error at the knob
 * (or the problem dim) that the plan cannot satisfy. */
gboolean pass_lower_d1(Ir *ir, GError **err);
gboolean pass_lower_p1(Ir *ir, GError **err);
/* p1.c: a lower bound on the instructions of one P1 layer (ir->nops), from
 * the decisions alone: what pass_lower_p1 checks against the program size
 * limit before it builds anything (docs/plan.md section 5). */
int64_t lw_p1_layer_floor(const Ir *ir);

#endif
