/* machine.h - hardware parameters of the TCC machine, their ranges, the area
 * table and the fixed timing/energy constants of the spec (v2; unchanged since v1, docs/machine.md).
 *
 * A Machine is plain data: the `.machine` line of an .asm file (and, later, the
 * `hardware:` section of a plan) fills one; everything else reads it.
 */
#ifndef TCC_MACHINE_H
#define TCC_MACHINE_H

#include <glib.h>
#include <stdint.h>

#define TCC_SIM_VERSION "tcc-sim 1.2.0 (spec v3)"
#define TCC_SPEC_VERSION 3

typedef struct Machine {
  int sms;          /* streaming multiprocessors                        */
  int wgs_per_sm;   /* workgroups per SM                                */
  int rf_kib;       /* register file per WG, KiB                        */
  int vl;           /* vector lanes per WG = number of RF partitions    */
  int mma_arrays;   /* 32x32 MMA arrays per SM                          */
  int sfu;          /* SFU lanes per SM                                 */
  int sh_kib;       /* shared store per SM, KiB (0 = none)              */
  int dma_engines;  /* DMA engines per SM                               */
  int dma_depth;    /* descriptors in flight per engine                 */
  int hbm_channels; /* HBM channels (64-byte lines interleaved)         */
  int noc_bits;     /* NoC link width per SM, bits per cycle            */
  int multicast;    /* 0/1: LD.mc allowed                               */
  int reduce_units; /* REDUCE units (RED allowed when > 0)              */
} Machine;

/* One row of the parameter table: `.machine` key, range and default. */
typedef struct MachineParam {
  const char *key;
  size_t offset;    /* offsetof(Machine, field) */
  int min, max, def;
  gboolean pow2;    /* value must be a power of two */
  const char *what;
} MachineParam;

extern const MachineParam sim_machine_params[];
extern const int sim_machine_nparams;

/* Fixed constants of the spec (v1 to v3): timing in cycles, area in mm^2. */
enum {
  T_ISSUE = 1,          /* cycles between two issues of one WG          */
  T_MMA_BLOCK = 32,     /* one 32x32x32 block on one array               */
  T_DMA_SETUP = 8,      /* descriptor setup on its engine                */
  T_DMA_SEGMENT = 2,    /* extra request cycles per contiguous segment   */
  T_HBM_LATENCY = 100,  /* line request -> data at the channel's output  */
  T_NOC_LATENCY = 8,    /* one NoC crossing                              */
  T_SH_LATENCY = 16,    /* SH access                                     */
  T_SIG_LATENCY = 4,    /* SIG -> visible to WAIT                        */
  T_RED_LATENCY = 8,    /* REDUCE unit pipeline                          */
  T_HOST_LATENCY = 200, /* D1: output stored -> next input released      */
  RF_PORT_BYTES = 128,  /* bytes per cycle per RF partition port          */
  SH_PORT_BYTES = 64,   /* bytes per cycle of an SM's SH port            */
  RED_FLOATS = 16,      /* floats per cycle of a REDUCE unit             */
  HBM_LINE = 64,        /* bytes per HBM line                            */
};

/* The largest count or time a program or option may give (docs/machine.md
 * §3, §4): WAITT cycles, SIG/WAIT counts and --max-cycles are at most 10^18,
 * so that a time plus a count stays far inside int64 (event counters, which
 * add up many SIGs, saturate at INT64_MAX instead). */
#define TCC_MAX_COUNT INT64_C(1000000000000000000)

/* Energy per action (docs/machine.md §5) as an exact count of energy
 * units: 1 unit = 1/EU_PER_PJ pJ = 50 fJ, the largest unit in which every
 * constant of the table is a whole number (0.25, 0.3 and 0.4 pJ need
 * twentieths).  The simulator adds only these integers; the pJ values
 * below derive from them (the bounds, docs/bounds.md, use those). */
#define EU_PER_PJ 20
#define EU_MMA_BLOCK INT64_C(409600) /* one 32x32x32 block (20480 pJ, 0.625 pJ/MAC) */
#define EU_VEC_ELEM INT64_C(40)      /* one element of one VEC op (2 pJ)    */
#define EU_SFU_ELEM INT64_C(160)     /* one element of one SFU op (8 pJ)    */
#define EU_RED_ELEM INT64_C(40)      /* one float into a REDUCE unit (2 pJ) */
#define EU_RF_BYTE INT64_C(5)        /* one RF byte read or written (0.25)  */
#define EU_SH_BYTE INT64_C(6)        /* one SH byte read or written (0.3)   */
#define EU_NOC_BYTE INT64_C(8)       /* one byte over one NoC link (0.4)    */
#define EU_HBM_LINE INT64_C(44000)   /* one 64-byte HBM line (2200 pJ)      */
#define EU_DMA_DESC INT64_C(1000)    /* one DMA descriptor (50 pJ)          */
/* The same in pJ (each division is exact or the double nearest to the
 * table's decimal: 0.25, 0.3, 0.4). */
#define E_MMA_BLOCK ((double)EU_MMA_BLOCK / EU_PER_PJ)
#define E_VEC_ELEM ((double)EU_VEC_ELEM / EU_PER_PJ)
#define E_SFU_ELEM ((double)EU_SFU_ELEM / EU_PER_PJ)
#define E_RED_ELEM ((double)EU_RED_ELEM / EU_PER_PJ)
#define E_RF_BYTE ((double)EU_RF_BYTE / EU_PER_PJ)
#define E_SH_BYTE ((double)EU_SH_BYTE / EU_PER_PJ)
#define E_NOC_BYTE ((double)EU_NOC_BYTE / EU_PER_PJ)
#define E_HBM_LINE ((double)EU_HBM_LINE / EU_PER_PJ)
#define E_DMA_DESC ((double)EU_DMA_DESC / EU_PER_PJ)
/* Static power is not counted in units: it is the same in every cycle,
 * so it moves no window, and it is added once, in W, when a figure is
 * printed (docs/machine.md §5). */
#define P_STATIC_PER_MM2 0.15 /* static power, W per mm^2           */

/* Area per component, mm^2 (docs/machine.md "Area"). */
#define A_SM_BASE 0.36        /* per SM: issue, control, event logic */
#define A_RF_KIB 0.0012       /* per KiB of RF (all WGs)             */
#define A_MMA_ARRAY 0.25      /* per MMA array                       */
#define A_VEC_LANE 0.003      /* per vector lane per WG              */
#define A_SFU_LANE 0.0125     /* per SFU lane per SM                 */
#define A_SH_KIB 0.0008       /* per KiB of SH                       */
#define A_DMA_ENGINE 0.03     /* per DMA engine                      */
#define A_DMA_SLOT 0.005      /* per descriptor slot of an engine    */
#define A_HBM_CHANNEL 0.18    /* per HBM channel (global)            */
#define A_NOC_BIT 0.001       /* per bit of NoC width (global)       */
#define A_MULTICAST 0.3       /* multicast support (global)          */
#define A_REDUCE_UNIT 0.25    /* per REDUCE unit (global)            */
#define AREA_LIMIT_MM2 24.0
#define POWER_LIMIT_W 20.0
#define POWER_WINDOW 1000
/* The result schema every tool's JSON and CSV follow (docs/tools.md,
 * "Results"): its version, written as `schema_version`. */
#define TCC_RESULT_SCHEMA 1

/* The seed-like default machine. */
void sim_machine_default(Machine *m);
/* Set one parameter by key; FALSE with *err set when unknown or out of range. */
gboolean sim_machine_set(Machine *m, const char *key, long value, GError **err);
/* Cross-parameter checks (rf_kib divisible by vl, ...). */
gboolean sim_machine_validate(const Machine *m, GError **err);
/* Derived sizes. */
int sim_machine_wgs(const Machine *m);          /* sms * wgs_per_sm        */
int sim_machine_part_bytes(const Machine *m);   /* rf_kib*1024 / vl        */
/* Total area in mm^2 and the static power it implies. */
double sim_machine_area(const Machine *m);
/* The component of the area that takes the most (for a hint when the
 * area is over the limit): its mm^2 into *mm2, and the hardware keys that
 * size it ("the RF: sms x wgs_per_sm x rf_kib"). */
const char *sim_machine_area_largest(const Machine *m, double *mm2);
double sim_machine_static_w(const Machine *m);
/* Canonical `.machine` line (no newline): the text hashed as "hardware". */
char *sim_machine_canonical(const Machine *m);

#define SIM_MACHINE_ERROR (sim_machine_error_quark())
GQuark sim_machine_error_quark(void);

#endif
