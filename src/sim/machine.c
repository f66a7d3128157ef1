/* machine.c - the parameter table, validation, area and canonical form of a
 * Machine (docs/machine.md sections 1 and 6). */
#include "machine.h"

#include <stddef.h>

G_DEFINE_QUARK(tcc-machine-error-quark, sim_machine_error)

#define P(key, field, lo, hi, def, pow2, what) \
  {key, offsetof(Machine, field), lo, hi, def, pow2, what}
/* ORDER-MATTERS: the canonical `.machine` line lists keys in this order
 * (dma_engines/dma_depth print together as dma=ExD). */
const MachineParam sim_machine_params[] = {
    P("sms", sms, 1, 64, 16, FALSE, "streaming multiprocessors"),
    P("wgs_per_sm", wgs_per_sm, 1, 8, 4, FALSE, "workgroups per SM"),
    P("rf_kib", rf_kib, 16, 256, 64, TRUE, "register file per WG, KiB"),
    P("vl", vl, 4, 32, 16, TRUE, "vector lanes per WG (RF partitions)"),
    P("mma_arrays", mma_arrays, 1, 4, 1, FALSE, "MMA arrays per SM"),
    P("sfu", sfu, 1, 64, 8, FALSE, "SFU lanes per SM"),
    P("sh_kib", sh_kib, 0, 1024, 0, FALSE, "shared store per SM, KiB"),
    P("dma_engines", dma_engines, 1, 8, 2, FALSE, "DMA engines per SM"),
    P("dma_depth", dma_depth, 1, 8, 1, FALSE, "descriptors in flight per engine"),
    P("hbm", hbm_channels, 1, 32, 8, FALSE, "HBM channels"),
    P("noc", noc_bits, 64, 2048, 512, TRUE, "NoC link width, bits"),
    P("multicast", multicast, 0, 1, 1, FALSE, "multicast support"),
    P("reduce", reduce_units, 0, 8, 0, FALSE, "REDUCE units"),
};
#undef P
const int sim_machine_nparams = G_N_ELEMENTS(sim_machine_params);

static int *field(Machine *m, const MachineParam *p) {
  return (int *)((char *)m + p->offset);
}

void sim_machine_default(Machine *m) {
  for (int i = 0; i < sim_machine_nparams; i++)
    *field(m, &sim_machine_params[i]) = sim_machine_params[i].def;
}

gboolean sim_machine_set(Machine *m, const char *key, long value, GError **err) {
  for (int i = 0; i < sim_machine_nparams; i++) {
    const MachineParam *p = &sim_machine_params[i];
    if (g_strcmp0(p->key, key) != 0) continue;
    if (value < p->min || value > p->max) {
      g_set_error(err, SIM_MACHINE_ERROR, 1, "%s=%ld out of range %d..%d (%s)",
                  key, value, p->min, p->max, p->what);
      return FALSE;
    }
    if (p->pow2 && (value & (value - 1)) != 0) {
      g_set_error(err, SIM_MACHINE_ERROR, 1, "%s=%ld must be a power of two (%s)",
                  key, value, p->what);
      return FALSE;
    }
    *field(m, p) = (int)value;
    return TRUE;
  }
  g_set_error(err, SIM_MACHINE_ERROR, 2, "unknown machine parameter '%s'", key);
  return FALSE;
}

gboolean sim_machine_validate(const Machine *m, GError **err) {
  if ((m->rf_kib * 1024) % m->vl != 0) {
    g_set_error(err, SIM_MACHINE_ERROR, 1,
                "rf_kib=%d is not divisible into vl=%d partitions", m->rf_kib, m->vl);
    return FALSE;
  }
  return TRUE;
}

int sim_machine_wgs(const Machine *m) { return m->sms * m->wgs_per_sm; }

int sim_machine_part_bytes(const Machine *m) { return m->rf_kib * 1024 / m->vl; }

double sim_machine_area(const Machine *m) {
  double per_sm = A_SM_BASE + A_RF_KIB * m->rf_kib * m->wgs_per_sm +
                  A_MMA_ARRAY * m->mma_arrays + A_VEC_LANE * m->vl * m->wgs_per_sm +
                  A_SFU_LANE * m->sfu + A_SH_KIB * m->sh_kib +
                  m->dma_engines * (A_DMA_ENGINE + A_DMA_SLOT * m->dma_depth);
  double global = A_HBM_CHANNEL * m->hbm_channels + A_NOC_BIT * m->noc_bits +
                  A_MULTICAST * m->multicast + A_REDUCE_UNIT * m->reduce_units;
  return per_sm * m->sms + global;
}

const char *sim_machine_area_largest(const Machine *m, double *mm2) {
  const struct {
    const char *what;
    double a;
  } part[] = {
      {"the SMs' base: sms", A_SM_BASE * m->sms},
      {"the RF: sms x wgs_per_sm x rf_kib", A_RF_KIB * m->rf_kib * m->wgs_per_sm * m->sms},
      {"the MMA arrays: sms x mma_arrays", A_MMA_ARRAY * m->mma_arrays * m->sms},
      {"the vector lanes: sms x wgs_per_sm x vl", A_VEC_LANE * m->vl * m->wgs_per_sm * m->sms},
      {"the SFU lanes: sms x sfu", A_SFU_LANE * m->sfu * m->sms},
      {"SH: sms x sh_kib", A_SH_KIB * m->sh_kib * m->sms},
      {"the DMA engines: sms x dma.engines x dma.depth", m->dma_engines * (A_DMA_ENGINE + A_DMA_SLOT * m->dma_depth) * m->sms},
      {"the HBM channels: hbm", A_HBM_CHANNEL * m->hbm_channels},
      {"the NoC: noc bits", A_NOC_BIT * m->noc_bits},
      {"multicast", A_MULTICAST * m->multicast},
      {"the REDUCE units: reduce", A_REDUCE_UNIT * m->reduce_units},
  };
  guint best = 0;
  for (guint i = 1; i < G_N_ELEMENTS(part); i++)
    if (part[i].a > part[best].a) best = i;
  *mm2 = part[best].a;
  return part[best].what;
}

double sim_machine_static_w(const Machine *m) {
  return P_STATIC_PER_MM2 * sim_machine_area(m);
}

char *sim_machine_canonical(const Machine *m) {
  return g_strdup_printf(
      ".machine sms=%d wgs_per_sm=%d rf_kib=%d vl=%d mma_arrays=%d sfu=%d "
      "sh_kib=%d dma=%dx%d hbm=%d noc=%d multicast=%d reduce=%d",
      m->sms, m->wgs_per_sm, m->rf_kib, m->vl, m->mma_arrays, m->sfu, m->sh_kib,
      m->dma_engines, m->dma_depth, m->hbm_channels, m->noc_bits, m->multicast,
      m->reduce_units);
}
