/* json_text.c - the tools' JSON text (json_text.h). */
#include "json_text.h"

#include "json_num.h"

char *json_pretty_text(JsonBuilder *b) {
  g_autoptr(JsonGenerator) gen = json_generator_new();
  g_autoptr(JsonNode) root = json_builder_get_root(b);
  json_generator_set_root(gen, root);
  json_generator_set_pretty(gen, TRUE);
  g_autofree char *text = json_generator_to_data(gen, NULL);
  g_autofree char *shortest = json_shortest_numbers(text);
  return g_strconcat(shortest, "\n", NULL);
}
