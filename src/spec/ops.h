/* ops.h - the machine's instructions as tables expanded from ops.def: the
 * opcode, its unit and its operand form.  Public: the assembler and the
 * simulator use it, and so does the compiler, whose IR ops are these opcodes
 * (src/ir/ir.h), so one line in ops.def adds an instruction everywhere. */
#ifndef TCC_OPS_H
#define TCC_OPS_H

typedef enum {
#define X(e, m, u, f) OP_##e,
#include "ops.def"
#undef X
  OP__COUNT
} Op;

typedef enum { UNIT_NONE, UNIT_DMA, UNIT_MMA, UNIT_VEC, UNIT_SFU, UNIT_RED } Unit;
typedef enum {
  F_LD, F_ST, F_MMA, F_BIN, F_FMA, F_IMM, F_UN, F_FILL, F_ROW, F_RED, F_EV, F_N,
  F_NONE
} OpForm;

extern const char *const sim_op_mnemonic[OP__COUNT];
extern const Unit sim_op_unit[OP__COUNT];
extern const OpForm sim_op_form[OP__COUNT];

#endif
