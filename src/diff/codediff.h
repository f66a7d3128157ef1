/* codediff.h - the generated code's difference between two programs,
 * summarised per task and per WG (tcc-diff, part 2).
 *
 * An instruction is its line without the provenance comment (`; knob:line
 * task`): a knob written on another line of the plan is no difference.
 * Its task is the comment's task name; END, which belongs to no task,
 * counts for its WG only.  Per task and per WG: the instructions of each
 * side, a line diff of the two (linediff.h), and the count of each
 * instruction class on each side; per WG also a line diff of its `.rf`
 * declarations (the RF allocation). */
#ifndef TCC_CODEDIFF_H
#define TCC_CODEDIFF_H

#include "linediff.h"
#include "program.h"

/* Instruction classes, from each opcode's unit in ops.def (LD and LD.mc
 * are loads, ST stores; SIG, WAIT, WAITT and END are sync).
 * ORDER-MATTERS: diff_class_name. */
typedef enum { IC_LD, IC_ST, IC_MMA, IC_VEC, IC_SFU, IC_RED, IC_SYNC, IC__COUNT } InsnClass;
extern const char *const diff_class_name[IC__COUNT]; /* "ld", "st", ... */
InsnClass diff_insn_class(Op op);

typedef struct CodeUnit {
  char *name;                  /* the task's name, or "wgN"                 */
  int wg_a, wg_b;              /* the WG in a and in b (-1: absent; a task
                                  on several WGs: the first)               */
  gint64 lines_a, lines_b;     /* instructions                              */
  DiffCount lines;             /* their line diff                           */
  gint64 count_a[IC__COUNT], count_b[IC__COUNT];
  gint64 rf_a, rf_b;           /* WGs: `.rf` declarations (tasks: 0)        */
  DiffCount rf;                /* WGs: their line diff                      */
  gboolean changed;            /* lines or RF differ, or a task moved WG    */
} CodeUnit;

typedef struct CodeDiff {
  GArray *tasks;   /* CodeUnit: a's tasks in a's order (WG by WG, then the
                      program's order), then b's new tasks in b's order    */
  GArray *wgs;     /* CodeUnit: WGs 0 .. max of both machines, by id       */
  int tasks_changed, wgs_changed;
  gint64 lines_a, lines_b;     /* instructions of the whole program        */
  DiffCount lines;             /* sum of the WGs' line diffs               */
} CodeDiff;

/* Compare the instructions of a and b (both assembled). */
CodeDiff *diff_code(const Program *a, const Program *b);
void diff_code_free(CodeDiff *d);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(CodeDiff, diff_code_free)

#endif
