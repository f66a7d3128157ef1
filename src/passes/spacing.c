/* spacing.c - power shaping by write-back spacing (store_spacing, seeds
 * #16): a WAITT of the stage's spacing before each output store, so that
 * the stores of the tasks of a stage, which finish together, spread over
 * more cycles and the hottest window holds fewer of them.  The spacing is
 * per stage (store_spacing.ln / qkv / att / wo / w1 / w2, each defaulting to
 * store_spacing): a stage is known by its task's role, so the lowering only
 * says where a stage's output store is (lw_space), never how long to wait.
 */
#include "lower.h"

int lw_space_stage(IrRoleKind kind) {
  switch (kind) {
  case ROLE_LN1:
  case ROLE_LN2: return SPACE_LN;
  case ROLE_QKV: return SPACE_QKV;
  case ROLE_ATT: return SPACE_ATT;
  case ROLE_WO: return SPACE_WO;
  case ROLE_W1: return SPACE_W1;
  case ROLE_W2: return SPACE_W2;
  default: return -1;
  }
}

int64_t lw_spacing_of(const Ir *ir, IrRoleKind kind, IrProv *prov) {
  const Schedule *s = &ir->sched;
  int st = lw_space_stage(kind);
  if (st < 0) {
    if (prov) *prov = ir_prov(ir, "store_spacing");
    return s->store_spacing;
  }
  char path[32];
  g_snprintf(path, sizeof path, "store_spacing.%s", sched_space_name[st]);
  IrProv own = ir_prov(ir, path);
  /* not written: the value is store_spacing's, and so is the provenance */
  if (prov) *prov = own.line > 0 ? own : ir_prov(ir, "store_spacing");
  return s->stage_spacing[st];
}

void lw_space(Ir *ir, int task) {
  IrProv prov;
  int64_t n = lw_spacing_of(ir, ir_task_at(ir, task)->role.kind, &prov);
  lw_waitt(ir, task, n, prov);
}
