/* lower.c - the pass `lower` (lower.h): the problem's strategy, D1's
 * (d1.c) or P1's (p1.c). */
#include "lower.h"

gboolean pass_lower(Ir *ir, GError **err) {
  return ir->prob.kind == PROB_D1 ? pass_lower_d1(ir, err) : pass_lower_p1(ir, err);
}
