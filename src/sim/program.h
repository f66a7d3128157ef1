/* program.h - an assembled TCC program: what the assembler (asm_parser.c)
 * produces and the simulator (sim.c) runs.  Plain data; every check that can
 * be made without running (shapes, partitions, RF bounds, static addresses)
 * has already been made by the assembler.
 */
#ifndef TCC_PROGRAM_H
#define TCC_PROGRAM_H

#include <glib.h>
#include <stdint.h>

#include "machine.h"
#include "ops.h"
#include "workload.h"

/* Instruction modifiers (suffixes after the mnemonic). */
enum {
  MOD_Z = 1,  /* MMA.z: c = a*b instead of c += a*b          */
  MOD_T = 2,  /* MMA.t: b is given transposed (N x K)         */
  MOD_MC = 4, /* LD.mc: multicast to the target list         */
};

/* A named RF region of one WG: `.rf NAME pP[+OFF] RxC`. Row-major FP32. */
typedef struct Region {
  char *name;
  int wg;
  int part;        /* first partition                              */
  int nparts;      /* partitions covered (1 when inside one)       */
  uint32_t byte;   /* byte offset in the WG's RF = part*part_bytes+OFF */
  int rows, cols;
  int line, col;   /* where declared                               */
} Region;

/* An RF operand: the window [r0, r0+rows) x [c0, c0+cols) of a region.
 * region < 0 means "absent".  A region holds at most rf_kib*256 <= 65536
 * floats, so r0 and c0 (< rows, cols of the region) fit in 16 bits; rows and
 * cols may be 65536 (a 65536x1 region) and stay int.  16 bytes. */
typedef struct RfRef {
  int region;      /* index into Program.regions                   */
  uint16_t r0, c0;
  int rows, cols;
} RfRef;

typedef enum { MEM_NONE, MEM_HBM, MEM_SH, MEM_RF } MemSpace;

/* The memory side of LD/ST. For HBM/SH, element (r,c) of the transfer lies at
 * addr + 4*(r*stride + c).  For MEM_RF (ST to another WG's region), the
 * instruction's `dst` names the destination window (its region belongs to
 * that WG). */
typedef struct MemRef {
  MemSpace space;
  int stride;      /* floats between rows (defaults to the RF side's cols) */
  uint64_t addr;   /* bytes; HBM: absolute, SH: offset in the SM's SH */
} MemRef;

/* 48 bytes: a large program holds hundreds of thousands of these, and the
 * kernel clears every page of them before the assembler writes it (the
 * bench's biggest single cost after the engine), then the simulator streams
 * through them.  The RF operands are indices into Program.refs (sim_ref):
 * a program names few distinct windows (interned by the assembler; index 0
 * is the absent operand, region -1).  Fields that no instruction uses
 * together share bytes: n (the sync forms, RED) with imm (F_IMM, F_FILL)
 * and addr (LD, ST), b (compute forms) with dst (ST wgN.d), event (sync
 * forms, RED) with stride (LD, ST).  Code reads a union member only for an
 * op whose form has it; c is 0 (absent) outside the compute forms.
 * An instruction's source text is sim_program_texts(p)[its index in
 * insn_block] (sim_insn_text). */
typedef struct Insn {
  union {
    int64_t n;     /* SIG/WAIT count, WAITT cycles, RED contributors */
    float imm;     /* F_IMM, F_FILL                                 */
    uint64_t addr; /* LD, ST: bytes; HBM: absolute, SH: offset in   */
                   /* the SM's SH (space MEM_HBM, MEM_SH)           */
  };
  int *targets;    /* LD.mc: ntargets destination WGs (ascending, */
                   /* unique), then the region named like d in each */
                   /* (sim_insn_tregion); targets[-1] is ntargets   */
                   /* (sim_insn_ntargets); NULL for other insns      */
  uint32_t d, a;   /* F_MMA: d=c(acc), a, b.  F_LD: d=dst. F_ST: a=src. */
  union {
    uint32_t b;
    uint32_t dst;  /* ST wgN.d (space MEM_RF): the destination      */
  };
  uint32_t c;      /* F_FMA                                         */
  int line, col;   /* source position of the mnemonic              */
  union {
    int event;     /* index into Program.events (F_EV, F_RED)       */
    int stride;    /* LD, ST: floats between rows of the memory side */
  };
  uint8_t op;      /* Op                                            */
  uint8_t mods;    /* MOD_*                                         */
  uint8_t space;   /* LD, ST: MemSpace of the memory side; for HBM/SH */
                   /* element (r,c) lies at addr + 4*(r*stride + c); */
                   /* MEM_RF: ST to another WG's region, dst        */
  uint8_t pad_;
} Insn;

#if UINTPTR_MAX == UINT64_MAX
_Static_assert(sizeof(Insn) == 48, "Insn grew: see the comment above it");
#endif

/* LD.mc: the number of targets (0 for any other instruction). */
static inline int sim_insn_ntargets(const Insn *in) { return in->targets ? in->targets[-1] : 0; }
/* LD.mc: the region of target k (the one named like d in that WG). */
static inline int sim_insn_tregion(const Insn *in, int k) {
  return in->targets[sim_insn_ntargets(in) + k];
}
/* The memory side of LD/ST as a MemRef. */
static inline MemRef sim_insn_mem(const Insn *in) {
  MemRef m = {(MemSpace)in->space, in->stride, in->addr};
  return m;
}

/* An instruction that may write into another WG's RF: insn_block[at], of
 * WG wg. */
typedef struct SimXwg {
  size_t at;
  int wg;
} SimXwg;

typedef struct WgCode {
  int wg;          /* WG id: sm = wg / wgs_per_sm                  */
  int line;        /* line of `.wg`                                 */
  Insn *insns;
  int n;           /* last instruction is END                       */
} WgCode;

typedef struct Program {
  char *file;          /* as given on the command line              */
  Machine hw;
  Problem prob;
  Abi abi;
  GPtrArray *regions;  /* Region*, in declaration order             */
  GPtrArray *events;   /* char* names without "ev.", first-use order; "in" is index 0 */
  GPtrArray *texts;    /* char*: source line text (trimmed), for reports, */
                       /* one per instruction in insn_block order; built */
                       /* on first use (sim_program_texts), NULL before */
  WgCode *wgs;         /* one per WG of the machine, indexed by WG id; */
                       /* n == 0 for a WG without a section (idle)     */
  int nwgs;
  char sha256[65];     /* of the program text                        */
  /* Storage behind the fields above, owned by the Program: */
  const char *source;  /* the program text (source_len bytes, then a NUL */
  size_t source_len;   /* and padding): mapped from the file, or the    */
  size_t source_map;   /* caller's buffer; source_map: bytes mapped (0: */
                       /* g_malloc'd)                                  */
  RfRef *refs;         /* the RF operands of the instructions (Insn.d, */
  uint32_t nrefs;      /* a, b, c): refs[0] is the absent one         */
  Insn *insn_block;    /* every section's instructions: wgs[w].insns  */
                       /* point into this one array                    */
  size_t ninsns;       /* in insn_block                               */
  GArray *text_at;     /* uint64_t pairs (instruction, source offset) */
                       /* of the rare instructions whose line or column */
                       /* saturated at INT_MAX (sim_program_texts)     */
  char *text_buf;      /* the texts, NUL-terminated (sim_program_texts) */
  gsize texts_once;    /* g_once_init_enter: texts built                */
  GArray *xwg;         /* SimXwg: the instructions that may write into */
                       /* another WG's RF (ST wgN.d, LD.mc), in file   */
                       /* order (the simulator's find_remote)          */
  GPtrArray *lists;    /* LD.mc target lists: one block each, holding */
                       /* targets then their regions                   */
} Program;

/* Assemble `text` (`len` bytes; the Program keeps a copy) read from `file`.
 * On error returns NULL and sets *err to "file:line:col: error: message". */
Program *sim_asm_parse(const char *file, const char *text, size_t len, GError **err);
Program *sim_asm_load(const char *file, GError **err); /* reads the file */
/* sim_asm_parse of a text the caller gives away (g_malloc'd, `len` bytes;
 * NULL when len is 0): it becomes the Program's source without a copy (tcc-grade's
 * generated programs: 13 MB for plans/best.yaml's P1); freed on error. */
Program *sim_asm_parse_take(const char *file, char *text, size_t len, GError **err);
/* TRUE (default): common instruction lines take a shortcut with the same
 * result; tests set FALSE to compare against the general parser. */
extern gboolean sim_asm_fast_path;
/* Texts of at least this many bytes (default 1 MiB) are hashed on a thread
 * while they are parsed (the same digest); tests set 0 to take that path
 * on small programs. */
extern size_t sim_asm_hash_thread_min;
void sim_program_free(Program *p);
/* Ask for transparent huge pages on a large block that will be written from
 * end to end (HBM, the instructions, the source): one 4 KiB page fault per
 * page costs more than filling it.  Only a hint; blocks under 4 MiB are left
 * alone. */
void sim_huge_hint(void *p, size_t n);
/* Fault in the pages of a block about to be written in order (a growing
 * array's new half): one call instead of a page fault per 4 KiB page, which
 * costs more than clearing the page on a virtual machine.  Only a hint;
 * blocks under 256 KiB are left alone. */
void sim_prefault(void *p, size_t n);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(Program, sim_program_free)

/* Every instruction's source line, trimmed, in insn_block order: built from
 * the source and the instructions' positions on the first call (the
 * assembler does not keep them: most runs never print one, and the bench
 * program's 542k would cost 4 MB of pointers and a writable copy of the
 * text).  Thread-safe. */
const GPtrArray *sim_program_texts(const Program *p);

/* The instruction's source line, trimmed (reports, traces). */
static inline const char *sim_insn_text(const Program *p, const Insn *in) {
  return (const char *)g_ptr_array_index(sim_program_texts(p), (guint)(in - p->insn_block));
}

/* An instruction's RF operand (Insn.d, a, b, c, dst). */
static inline const RfRef *sim_ref(const Program *p, uint32_t id) { return &p->refs[id]; }

/* Pretty region/operand names for diagnostics ("wg5.x[0:1,0:128]"). */
char *sim_rfref_str(const Program *p, const RfRef *r);

#define SIM_ASM_ERROR (sim_asm_error_quark())
GQuark sim_asm_error_quark(void);

#endif
