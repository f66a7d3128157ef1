/* jdoc_render.c - the JSON module (BUILD/tcc-json.so, jdoc.h): a recorded
 * document replayed into json-glib's builder and printed by its generator:
 * pretty with a final newline, the same text as json_pretty_text
 * (json_text.h) for the same builder calls, or compact as json_to_string.
 * Numbers are spelled shortest (json_num.h, whose source it links in);
 * it calls nothing else of the tools, so it links only json-glib. */
#include "jdoc.h"
#include "json_num.h"

#include <json-glib/json-glib.h>

static JsonNode *replay(const JDocOp *ops, guint n) {
  g_autoptr(JsonBuilder) b = json_builder_new();
  for (guint k = 0; k < n; k++) {
    const JDocOp *o = &ops[k];
    switch (o->kind) {
    case JD_BEGIN_OBJECT: json_builder_begin_object(b); break;
    case JD_END_OBJECT: json_builder_end_object(b); break;
    case JD_BEGIN_ARRAY: json_builder_begin_array(b); break;
    case JD_END_ARRAY: json_builder_end_array(b); break;
    case JD_MEMBER: json_builder_set_member_name(b, o->s); break;
    case JD_STRING: json_builder_add_string_value(b, o->s); break;
    case JD_INT: json_builder_add_int_value(b, o->i); break;
    case JD_DOUBLE: json_builder_add_double_value(b, o->d); break;
    case JD_BOOL: json_builder_add_boolean_value(b, o->i != 0); break;
    case JD_NULL: json_builder_add_null_value(b); break;
    }
  }
  return json_builder_get_root(b);
}

char *jdoc_render(const JDocOp *ops, guint n) {
  g_autoptr(JsonNode) root = replay(ops, n);
  g_autoptr(JsonGenerator) gen = json_generator_new();
  json_generator_set_root(gen, root);
  json_generator_set_pretty(gen, TRUE);
  g_autofree char *text = json_generator_to_data(gen, NULL);
  g_autofree char *shortest = json_shortest_numbers(text ? text : "null");
  return g_strconcat(shortest, "\n", NULL);
}

char *jdoc_render_compact(const JDocOp *ops, guint n) {
  g_autoptr(JsonNode) root = replay(ops, n);
  g_autofree char *text = root ? json_to_string(root, FALSE) : g_strdup("null");
  return json_shortest_numbers(text);
}
