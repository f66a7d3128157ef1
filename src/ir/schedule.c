/* schedule.c - the schedule record (schedule.h). */
#include "schedule.h"

#include <string.h>

const char *const sched_proj_name[PROJ__COUNT] = {"qkv", "wo", "w1", "w2"};
const char *const sched_space_name[SPACE__COUNT] = {"ln", "qkv", "att", "wo", "w1", "w2"};

int sched_proj_n(const Problem *d, SchedProj proj) {
  switch (proj) {
  case PROJ_QKV: return 3 * d->d_model;
  case PROJ_W1: return d->d_ff;
  default: return d->d_model;
  }
}

int sched_proj_k(const Problem *d, SchedProj proj) { return proj == PROJ_W2 ? d->d_ff : d->d_model; }

static int sched_index(const Schedule *s, const char *path) {
  for (int i = 0; path && i < SCHED_NKNOBS; i++) {
    const char *full = s->loc[i].path;
    if (!full) continue;
    /* full paths are "d1.KNOB" / "p1.KNOB"; the first bytes rule most out
     * (the lowerings ask for a knob's provenance per op) */
    if ((full[0] == path[0] && strcmp(full, path) == 0) ||
        (full[3] == path[0] && strcmp(full + 3, path) == 0))
      return i;
  }
  return -1;
}

SchedLoc sched_loc(const Schedule *s, const char *path) {
  int i = sched_index(s, path);
  return i >= 0 ? s->loc[i] : (SchedLoc){0, 0, NULL};
}

gboolean sched_fitted(const Schedule *s, const char *path) {
  int i = sched_index(s, path);
  return i >= 0 && s->fitted[i];
}

void sched_print(GString *out, const Schedule *s) {
  for (int i = 0; i < SCHED_NKNOBS; i++) {
    const SchedLoc *l = &s->loc[i];
    if (!l->path) continue;
    g_string_append_printf(out, "  %s = %s", l->path, s->value[i]);
    if (s->fitted[i])
      g_string_append(out, "  ; power.fit\n");
    else if (s->chosen[i] && l->line > 0)
      g_string_append_printf(out, "  ; %s line %d:%d\n", s->chosen[i] == SCHED_AUTO ? "auto" : "fallback", l->line,
                             l->col);
    else if (s->chosen[i] == SCHED_FALLBACK) /* a capacity repair of a knob the plan left */
      g_string_append(out, "  ; fallback\n");
    else if (l->line > 0)
      g_string_append_printf(out, "  ; line %d:%d\n", l->line, l->col);
    else
      g_string_append(out, "  ; default\n");
  }
}
