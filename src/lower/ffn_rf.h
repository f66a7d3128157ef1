/* ffn_rf.h - P1's FFN hidden rows RF to RF, W1 and W2 as a pair of
 * resident stages (ffn_rf.c). */
#ifndef TCC_LOWER_FFN_RF_H
#define TCC_LOWER_FFN_RF_H

#include "resident_owners.h"

/* P1 handoff: rf (ffn_rf.c): W1 and W2 of one layer (their resident
 * descriptions, as for lw_p1_resident_stage) as a pair of stages on
 * disjoint WGs, W1's GELU rows RF to RF into W2's A buffers; FALSE with an
 * error at the knob (prov: `handoff`) that the pair cannot satisfy. */
gboolean lw_p1_ffn_rf(Ir *ir, LwP1State *state, const LwP1Resident *w1, const LwP1Resident *w2, IrProv prov,
                      GError **err);

#endif
