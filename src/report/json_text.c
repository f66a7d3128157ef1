/* json_text.c - the tools' JSON text (json_text.h). */
#include "json_text.h"

#include "json_num.h"

#include <math.h>
#include <string.h>

char *json_pretty_text(JsonBuilder *b) {
  g_autoptr(JsonGenerator) gen = json_generator_new();
  g_autoptr(JsonNode) root = json_builder_get_root(b);
  json_generator_set_root(gen, root);
  json_generator_set_pretty(gen, TRUE);
  g_autofree char *text = json_generator_to_data(gen, NULL);
  g_autofree char *shortest = json_shortest_numbers(text);
  return g_strconcat(shortest, "\n", NULL);
}

void json_add_utf8(JsonBuilder *b, const char *v) {
  g_autofree char *u = json_utf8(v);
  if (u)
    json_builder_add_string_value(b, u);
  else
    json_builder_add_null_value(b);
}

void json_add_plan_value(JsonBuilder *b, const char *v) {
  gint64 i;
  char *end = NULL;
  if (g_ascii_string_to_signed(v, 10, G_MININT64, G_MAXINT64, &i, NULL)) {
    json_builder_add_int_value(b, i);
    return;
  }
  double d = g_ascii_strtod(v, &end);
  gboolean real = *v && !*end && isfinite(d) && strspn(v, "+-0123456789.eE") == strlen(v);
  if (real)
    json_builder_add_double_value(b, d);
  else
    json_add_utf8(b, v);
}
