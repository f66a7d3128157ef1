/* attention_wo.h - P1's attention output RF to RF into wo's owners
 * (attention_wo.c). */
#ifndef TCC_LOWER_ATTENTION_WO_H
#define TCC_LOWER_ATTENTION_WO_H

#include "attention_tiles.h"
#include "resident_owners.h"

/* attention.handoff: rf | relay (attention_wo.c): attention `at` and the
 * resident wo stage `wo` (multicast) built together, each attention task
 * putting its o tiles into wo's owners' A buffers (wo's A comes
 * LW_P1_FROM_STAGE), itself or (relays) through relay tasks of wo; the
 * attention tasks are pinned to WGs the owners and relays leave free.
 * FALSE with an error at the knob that prevents it. */
gboolean lw_p1_att_wo_rf(Ir *ir, LwP1State *state, LwP1Attention *at, const LwP1Resident *wo, gboolean relays,
                         IrProv prov, GError **err);

#endif
