/* spacing.c - power shaping by WAITT spacing (spacing.h): one mechanism, a
 * WAITT of a knob's cycles before a transfer, at two places: a stage's
 * output stores (both problems, first part) and P1's resident owners'
 * weight pieces, issuer turns and first LayerNorm (second part).
 *
 * Write-back spacing (store_spacing, seeds
 * #16): a WAITT of the stage's spacing before each output store, so that
 * the stores of the tasks of a stage, which finish together, spread over
 * more cycles and the hottest window holds fewer of them.  The spacing is
 * per stage (store_spacing.ln / qkv / att / wo / w1 / w2, each defaulting to
 * store_spacing): a stage is known by its task's role, so the lowering only
 * says where a stage's output store is (lw_space), never how long to wait.
 */
#include "spacing.h"

#include "builder.h"

int64_t lw_spacing_of(const Ir *ir, IrRoleKind kind, IrProv *prov) {
  const Schedule *s = &ir->sched;
  int st = ir_role_space(kind);
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

/* ---- Power shaping of the resident owners' weight loads
 * (weight_spacing.PROJ, P1).
 *
 * A resident projection's owners (resident_owners.c) load their weights in
 * pieces during the stage before theirs, piece k of owner o waiting for
 * that stage's chunk (k*n + o) * T / (nk*n): the owners' pieces interleave
 * and follow the previous stage instead of coming at once.  An owner whose
 * WG is still busy with an earlier task when the previous stage is near its
 * end finds those events already fired and issues all its pieces back to
 * back (layer 1's qkv owners on layer 0's W2 WGs: 8 x 4 KiB each, beside
 * LayerNorm's load burst, passed 20 W with DMA depth 2).  With
 * weight_spacing.PROJ = N every piece but an owner's first also waits N
 * cycles after the one before it (a WAITT), so a late owner spreads its
 * pieces over (pieces - 1) * N cycles; an owner paced by the events
 * (thousands of cycles apart) loses N cycles a piece, which its stage does
 * not wait for.  The first resident stage, which has no stage to pace by,
 * keeps its own gap (LW_P1R_FIRST_GAP).
 *
 * The first stage's owners (layer 0's qkv) all load their first piece at
 * cycle 0, beside the first LayerNorm's loads and copies of x (24 x 4 KiB
 * at once: 20.55 W with DMA depth 2).  With weight_stagger.PROJ = N owner o
 * (of the stage's K shards x panels, in that order) first waits o * N
 * cycles, so the owners' pieces come one after another; in a paced stage
 * the WAITT follows the event its first piece waits for.
 *
 * A multicast stage's issuer tasks (resident_owners.c, issuer()) take turns by
 * chunk and issue the next LD.mc as soon as its buffer is free, so a stage
 * whose owners are fed faster (shard_group.c) runs its MMAs and HBM reads
 * at their full rate: W2 grouped passed 24 W.  With issue_spacing.PROJ = N
 * each issuer waits N cycles (a WAITT) after one LD.mc before the WAIT for
 * the next one's buffer: a shard's i issuers start at most i chunks per N
 * cycles.  The issuers of multicast.pass (multicast.c) are not spaced.
 *
 * The program's first stage, layer 0's LN1, loads its rows of x_in beside
 * the first qkv owners' weight pieces, and all its tasks start at cycle 0:
 * with ln_first_stagger = N the task of row tile t first waits t * N
 * cycles, so that their loads spread over the time the weight pieces take
 * anyway (ln_fold_first_gap) and those pieces can come closer together.
 * With ln_fold each tile's statistics are needed only by qkv's epilogue of
 * that tile; without it qkv waits for the whole stage.  ln_stagger does
 * the same for every other LayerNorm stage, whose tasks all start when the
 * stage before ends, each loading its rows and storing them normalised at
 * about the same time (the largest P1 of the suite on 12 SMs: LN2's
 * 1000-cycle windows at 22.7 W).
 *
 * The lowering only says where a piece, chunk or task is (lw_piece_space,
 * lw_piece_stagger, lw_issue_space, lw_ln_stagger); this module, how
 * long to wait. */

int64_t lw_piece_spacing_of(const Ir *ir, SchedProj proj, IrProv *prov) {
  char path[32];
  g_snprintf(path, sizeof path, "weight_spacing.%s", sched_proj_name[proj]);
  if (prov) *prov = ir_prov(ir, path);
  return ir->sched.weight_spacing[proj];
}

void lw_piece_space(Ir *ir, int task, SchedProj proj) {
  IrProv prov;
  int64_t n = lw_piece_spacing_of(ir, proj, &prov);
  if (n > 0) lw_waitt(ir, task, n, prov);
}

void lw_piece_stagger(Ir *ir, int task, SchedProj proj, int owner) {
  char path[32];
  g_snprintf(path, sizeof path, "weight_stagger.%s", sched_proj_name[proj]);
  int64_t n = (int64_t)owner * ir->sched.weight_stagger[proj];
  if (n > 0) lw_waitt(ir, task, n, ir_prov(ir, path));
}

void lw_ln_stagger(Ir *ir, int task, int tile, gboolean first) {
  int64_t n = (int64_t)tile * (first ? ir->sched.ln_first_stagger : ir->sched.ln_stagger);
  if (n > 0) lw_waitt(ir, task, n, ir_prov(ir, first ? "ln_first_stagger" : "ln_stagger"));
}

void lw_issue_space(Ir *ir, int task, SchedProj proj) {
  char path[32];
  g_snprintf(path, sizeof path, "issue_spacing.%s", sched_proj_name[proj]);
  int64_t n = ir->sched.issue_spacing[proj];
  if (n > 0) lw_waitt(ir, task, n, ir_prov(ir, path));
}
