/* asm_lexer.re - the tokenizer of `.asm` files (re2c; generated into the build
 * directory by the Makefile).  Input ends with a NUL sentinel at text[len], so
 * no bounds checks are needed while scanning; a NUL anywhere before the end is
 * a TK_NUL token and any byte no rule accepts is a TK_ERROR token: the parser
 * reports both.  Actions only set the token kind; positions are computed once
 * in sim_asm_lex.  Columns count bytes from 1.
 */
#include "asm_lexer.h"

void sim_asm_lex_init(Lexer *lx, const char *text, size_t len) {
  lx->cur = text;
  lx->end = text + len;
  lx->line_start = text;
  lx->line = 1;
}

/* Classify the token at `*cursor` and advance past it; whitespace is skipped
 * by the caller's loop (TK__SKIP). */
enum { TK__SKIP = -1 };
static int scan(const unsigned char **cursor, const unsigned char *end) {
  const unsigned char *YYCURSOR = *cursor, *YYMARKER = YYCURSOR;
  int kind;
  /*!re2c
    re2c:define:YYCTYPE = "unsigned char";
    re2c:yyfill:enable = 0;
    re2c:sentinel = 0;

    digit = [0-9];
    name  = [A-Za-z_][A-Za-z0-9_]*;
    exp   = [eE] [+-]? digit+;

    [ \t\r\v\f]+                   { kind = TK__SKIP; goto done; }
    "\n"                           { kind = TK_NEWLINE; goto done; }
    ";" [^\n\x00]*                 { kind = TK_COMMENT; goto done; }
    ".machine"                     { kind = TK_MACHINE; goto done; }
    ".problem"                     { kind = TK_PROBLEM; goto done; }
    ".wg"                          { kind = TK_WG; goto done; }
    ".rf"                          { kind = TK_RF; goto done; }
    "." name                       { kind = TK_BADDIR; goto done; }
    [A-Za-z_][A-Za-z0-9_.]*        { kind = TK_IDENT; goto done; }
    digit+                         { kind = TK_INT; goto done; }
    digit+ "x" digit+              { kind = TK_SHAPE; goto done; }
    digit+ "." digit* exp? | "." digit+ exp? | digit+ exp
                                   { kind = TK_FLOAT; goto done; }
    ","                            { kind = TK_COMMA; goto done; }
    "["                            { kind = TK_LBRACK; goto done; }
    "]"                            { kind = TK_RBRACK; goto done; }
    ":"                            { kind = TK_COLON; goto done; }
    "+"                            { kind = TK_PLUS; goto done; }
    "-"                            { kind = TK_MINUS; goto done; }
    "{"                            { kind = TK_LBRACE; goto done; }
    "}"                            { kind = TK_RBRACE; goto done; }
    "="                            { kind = TK_EQ; goto done; }
    "\x00"                         { kind = YYCURSOR - 1 == end ? TK_EOF : TK_NUL;
                                     goto done; }
    *                              { kind = TK_ERROR; goto done; }
  */
done:
  *cursor = YYCURSOR;
  return kind;
}

void sim_asm_lex(Lexer *lx, Token *t) {
  for (;;) {
    const unsigned char *start = (const unsigned char *)lx->cur;
    while (*start == ' ' || *start == '\t') start++; /* the common blanks, before the DFA */
    const unsigned char *cur = start;
    int kind;
    if (sim_asm_ident[*cur] & SIM_ID_START) { /* the most common tokens, without the DFA */
      while (sim_asm_ident[*++cur] & SIM_ID_CHAR) {
      }
      kind = TK_IDENT;
    } else if (*cur == '\n' || *cur == ',') { /* the next most common */
      kind = *cur++ == '\n' ? TK_NEWLINE : TK_COMMA;
    } else {
      kind = scan(&cur, (const unsigned char *)lx->end);
    }
    if (kind == TK__SKIP) {
      lx->cur = (const char *)cur;
      continue;
    }
    if (kind == TK_EOF) cur = start; /* stay on the sentinel */
    sim_asm_lex_emit(lx, t, (TokKind)kind, (const char *)start, (const char *)cur);
    return;
  }
}
