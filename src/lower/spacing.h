/* spacing.h - power shaping by WAITT spacing (spacing.c): write-back
 * spacing per stage, the resident owners' weight pieces, the issuers'
 * turns, the first LayerNorm's stagger. */
#ifndef TCC_LOWER_SPACING_H
#define TCC_LOWER_SPACING_H

#include "ir.h"

/* spacing.c: write-back spacing per stage (store_spacing.STAGE, by the
 * role's ir_role_space; a role of none uses store_spacing): the spacing
 * of a role's stage and, into *prov (may be NULL), the knob that set it;
 * lw_space: WAITT that many cycles in task (nothing when 0), before one of
 * its stage's output stores. */
int64_t lw_spacing_of(const Ir *ir, IrRoleKind kind, IrProv *prov);
void lw_space(Ir *ir, int task);

/* spacing.c: weight_spacing.PROJ, the cycles between a paced resident
 * owner's weight pieces and, into *prov (may be NULL), the knob; lw_piece_space:
 * WAITT that many cycles in task (nothing when 0), before one of its pieces
 * after the first. */
int64_t lw_piece_spacing_of(const Ir *ir, SchedProj proj, IrProv *prov);
void lw_piece_space(Ir *ir, int task, SchedProj proj);
/* spacing.c: weight_stagger.PROJ: lw_piece_stagger WAITTs owner * N
 * cycles (weight_stagger.PROJ = N; nothing when 0) in task, before the
 * first weight piece of the stage's owner-th owner. */
void lw_piece_stagger(Ir *ir, int task, SchedProj proj, int owner);
/* spacing.c: issue_spacing.PROJ: lw_issue_space WAITTs N cycles in an
 * issuer task (issue_spacing.PROJ = N; nothing when 0), between one of its
 * LD.mc's of the stage's A chunks and the next. */
void lw_issue_space(Ir *ir, int task, SchedProj proj);
/* spacing.c: ln_first_stagger, ln_stagger: lw_ln_stagger WAITTs tile * N
 * cycles (nothing when 0) at the start of a LayerNorm task for row tile
 * `tile`: layer 0's LN1 (`first`, ln_first_stagger = N) or any other
 * (ln_stagger = N). */
void lw_ln_stagger(Ir *ir, int task, int tile, gboolean first);

#endif
