/* test_timing.c - every resource of docs/machine.md §4 in isolation: the
 * exact cycle counts its formulas give for tiny programs. */
#include <stdio.h>

#include "tests.h"

/* A P1 program: the default machine with `hw` overrides and the given
 * sections ("\n"-joined .wg blocks). */
static int64_t cyc(const char *hw, const char *body) {
  g_autofree char *t = g_strdup_printf("%s\n.problem p1\n%s", t_machine(hw), body);
  return t_cycles(t);
}

#define ABC ".rf a p0 32x32\n.rf b p1 32x32\n.rf c p2 32x32\n"

START_TEST(test_vec_cycles) {
  /* fill 32x32 at vl16: 1024/16 = 64 cycles; END issues at 1, waits */
  ck_assert_int_eq(cyc("", ".wg 0\n.rf a p0 32x32\n VEC.fill a, 1.0\n END\n"), 64);
  ck_assert_int_eq(cyc("vl=32", ".wg 0\n.rf a p0 32x32\n VEC.fill a, 1.0\n END\n"), 32);
  /* row sum: ceil(1024/16) + log2(16) after the fill (unit FIFO) */
  ck_assert_int_eq(cyc("", ".wg 0\n.rf a p0 32x32\n.rf s p1 32x1\n VEC.fill a, 1.0\n"
                           " VEC.rsum s, a\n END\n"), 64 + 64 + 4);
  /* a 1-element op still takes a cycle */
  ck_assert_int_eq(cyc("", ".wg 0\n.rf a p0 1x1\n VEC.fill a, 1.0\n END\n"), 2);
}
END_TEST

START_TEST(test_mma_cycles) {
  const char *one = ".wg 0\n" ABC " VEC.fill a, 1.0\n VEC.fill b, 1.0\n MMA.z c, a, b\n END\n";
  /* fills 0..64 and 64..128 (one VEC unit); MMA 128..160 */
  ck_assert_int_eq(cyc("", one), 160);
  /* 64x64 x 64x64 = 8 blocks = 256 cycles after fills of 64 x 2 */
  ck_assert_int_eq(cyc("", ".wg 0\n.rf a p0 64x64\n.rf b p4 64x64\n.rf c p8 64x64\n"
                           " VEC.fill a, 1.0\n VEC.fill b, 1.0\n MMA.z c, a, b\n END\n"),
                   256 + 256 + 256);
  /* a partial block (1x32 . 32x32) costs a whole block */
  ck_assert_int_eq(cyc("", ".wg 0\n.rf a p0 1x32\n.rf b p1 32x32\n.rf c p2 1x32\n"
                           " VEC.fill b, 1.0\n VEC.fill a, 1.0\n MMA.z c, a, b\n END\n"),
                   64 + 2 + 32);
}
END_TEST

/* Two WGs of one SM share its arrays; other SMs have their own. */
START_TEST(test_mma_sharing) {
  const char *w = ABC " VEC.fill a, 1.0\n VEC.fill b, 1.0\n MMA.z c, a, b\n MMA.z c, a, b\n END\n";
  g_autofree char *same = g_strdup_printf(".wg 0\n%s.wg 1\n%s", w, w);
  g_autofree char *other = g_strdup_printf(".wg 0\n%s.wg 4\n%s", w, w);
  g_autofree char *one = g_strdup_printf(".wg 0\n%s", w);
  int64_t alone = cyc("", one);
  ck_assert_int_eq(alone, 128 + 64);
  ck_assert_int_eq(cyc("", other), alone);
  ck_assert_int_eq(cyc("", same), 128 + 4 * 32);
  ck_assert_int_eq(cyc("mma_arrays=2", same), alone);
}
END_TEST

START_TEST(test_sfu_cycles) {
  const char *w = ".rf a p0 32x32\n VEC.fill a, 1.0\n SFU.exp a, a\n END\n";
  g_autofree char *one = g_strdup_printf(".wg 0\n%s", w);
  g_autofree char *two = g_strdup_printf(".wg 0\n%s.wg 1\n%s", w, w);
  ck_assert_int_eq(cyc("", one), 64 + 1024 / 8);
  ck_assert_int_eq(cyc("sfu=32", one), 64 + 1024 / 32);
  ck_assert_int_eq(cyc("", two), 64 + 2 * 1024 / 8); /* one SFU per SM */
}
END_TEST

/* LD of 4 KiB contiguous: setup 8, requests at 8..71, channel 1 cycle, data
 * 100 later, NoC in 1 cycle + 8, RF port 1 cycle, +1 to complete. */
START_TEST(test_dma_hbm) {
  ck_assert_int_eq(cyc("", ".wg 0\n.rf a p0 32x32\n LD a, hbm[x_in]\n END\n"), 71 + 111);
  /* a 64-bit NoC moves 8 B per cycle: 8 cycles per line, link-bound */
  ck_assert_int_eq(cyc("noc=64", ".wg 0\n.rf a p0 32x32\n LD a, hbm[x_in]\n END\n"),
                   108 + 8 * 63 + 8 + 8 + 1 + 1);
  /* rows of 64 B with a row stride: one segment per row, +2 cycles each */
  ck_assert_int_eq(cyc("", ".wg 0\n.rf a p0 32x16\n LD a, hbm[x_in], stride 256\n END\n"),
                   8 + 31 * 3 + 111);
}
END_TEST

/* RF -> RF between SMs: read port, out-link + 8, in-link + 8, write port. */
START_TEST(test_dma_remote) {
  const char *prog = ".wg 0\n.rf a p0 1x16\n VEC.fill a, 1.0\n ST wg4.b, a\n END\n"
                     ".wg 4\n.rf b p0 1x16\n END\n";
  /* fill 0..1; ST issues at 1: setup to 9, read port 9, out 10 (+8), in 19 (+8), write 28 */
  ck_assert_int_eq(cyc("", prog), 28 + 1 + 1);
  /* same SM: no NoC */
  ck_assert_int_eq(cyc("", ".wg 0\n.rf a p0 1x16\n VEC.fill a, 1.0\n ST wg1.b, a\n END\n"
                           ".wg 1\n.rf b p0 1x16\n END\n"), 10 + 1 + 1);
  /* a 1024-bit link carries two lines per cycle: two engines feeding one SM gain */
  const char *two = ".wg 0\n.rf a p0 32x32\n.rf b p1 32x32\n LD a, hbm[x_in]\n"
                    " LD b, hbm[x_in + 4096]\n END\n";
  ck_assert(cyc("noc=1024", two) < cyc("noc=512", two));
}
END_TEST

START_TEST(test_dma_depth) {
  const char *two = ".wg 0\n.rf a p0 32x32\n.rf b p1 32x32\n LD a, hbm[x_in]\n"
                    " LD b, hbm[x_in + 4096]\n END\n";
  /* one engine, depth 1: the second waits for the first (182), then 182 again */
  ck_assert_int_eq(cyc("dma=1x1", two), 182 + 182);
  /* depth 2: both in flight; the engine issues requests 72..135 for the second */
  ck_assert_int_eq(cyc("dma=1x2", two), 135 + 111);
  /* two engines issue requests in parallel, but one SM's NoC in-link moves
   * one line per cycle: no faster than one engine of depth 2 */
  ck_assert_int_eq(cyc("dma=2x1", two), cyc("dma=1x2", two));
}
END_TEST

/* 16 SMs each read 32 lines that all map to channel 0 (row stride 512 B =
 * 8 lines): 512 line-cycles on one channel bound the run. */
START_TEST(test_hbm_channel) {
  GString *g = g_string_new(NULL), *h = g_string_new(NULL);
  for (int sm = 0; sm < 16; sm++) {
    g_string_append_printf(g, ".wg %d\n.rf a p0 32x16\n LD a, hbm[x_in + %d], stride 128\n END\n",
                           sm * 4, sm * 8 * 64 * 32);
    g_string_append_printf(h, ".wg %d\n.rf a p0 32x16\n LD a, hbm[x_in + %d]\n END\n", sm * 4,
                           sm * 2048);
  }
  int64_t one_channel = cyc("", g->str), spread = cyc("", h->str);
  ck_assert_msg(one_channel >= 512 + 100, "%" G_GINT64_FORMAT, one_channel);
  ck_assert_msg(spread < 300, "%" G_GINT64_FORMAT, spread);
  g_string_free(g, TRUE);
  g_string_free(h, TRUE);
}
END_TEST

/* SH: port 1 line per cycle, +16; no NoC. */
START_TEST(test_dma_sh) {
  ck_assert_int_eq(cyc("sh_kib=64", ".wg 0\n.rf a p0 32x32\n LD a, sh[0]\n END\n"), 71 + 18 + 1);
  /* two WGs of one SM share the SM's SH port */
  const char *w = ".rf a p0 32x32\n LD a, sh[0]\n END\n";
  g_autofree char *two = g_strdup_printf(".wg 0\n%s.wg 1\n%s", w, w);
  ck_assert_int_eq(cyc("sh_kib=64", two), 71 + 64 + 18 + 1);
}
END_TEST

/* RF partition ports: a VEC op holds the write port of its partition, so a
 * transfer into the other half of that partition waits; another partition
 * does not. */
START_TEST(test_rf_ports) {
  const char *same = ".wg 0\n.rf v p0+0 16x32\n.rf l p0+2048 16x32\n VEC.fill v, 1.0\n"
                     " WAITT 1\n LD l, sh[0]\n END\n";
  const char *other = ".wg 0\n.rf v p0+0 16x32\n.rf l p1 16x32\n VEC.fill v, 1.0\n"
                      " WAITT 1\n LD l, sh[0]\n END\n";
  int64_t a = cyc("sh_kib=64 vl=16", same), b = cyc("sh_kib=64 vl=16", other);
  /* LD issues at 2 (after WAITT 1): requests 10..41, data at r+17 = 27..58;
   * port p0 is busy [0, 512/16 = 32) */
  ck_assert_int_eq(b, 41 + 18 + 1);
  ck_assert_msg(a > b, "same partition %" G_GINT64_FORMAT " vs other %" G_GINT64_FORMAT, a, b);
}
END_TEST

/* SIG fires 4 cycles after the WG's earlier work completes; WAITT stalls. */
START_TEST(test_events) {
  ck_assert_int_eq(cyc("", ".wg 0\n.rf a p0 32x32\n VEC.fill a, 1.0\n SIG ev.x, 1\n END\n"
                           ".wg 1\n.rf b p0 32x32\n WAIT ev.x, 1\n VEC.fill b, 1.0\n END\n"),
                   64 + 4 + 1 + 64); /* the WAIT issues at 68, the fill at 69 */
  ck_assert_int_eq(cyc("", ".wg 0\n.rf a p0 1x16\n WAITT 100\n VEC.fill a, 1.0\n END\n"), 102);
  /* counters accumulate: WAIT for 2 needs both signals */
  ck_assert_int_eq(cyc("", ".wg 0\n SIG ev.x, 1\n WAITT 50\n SIG ev.x, 1\n END\n"
                           ".wg 1\n.rf b p0 1x16\n WAIT ev.x, 2\n VEC.fill b, 1.0\n END\n"),
                   58); /* WAITT at 1 -> SIG at 51 fires at 55; WAIT 55, fill 56, END 57 */
}
END_TEST

/* RED: contributions cross the NoC (2 cycles + 8), the unit adds 2 x 2
 * cycles + 8, the sum returns over each NoC in-link (2 + 8) and lands. */
START_TEST(test_red) {
  const char *w = ".rf s p0 1x32\n.rf d p1 1x32\n VEC.fill s, 1.0\n RED d, s, ev.g, 2\n END\n";
  g_autofree char *two = g_strdup_printf(".wg 0\n%s.wg 4\n%s", w, w);
  ck_assert_int_eq(cyc("reduce=1", two), 2 + 2 + 8 + 4 + 8 + 2 + 8 + 1);
}
END_TEST

/* Hazards: a later write waits for an earlier read of the same range (WAR),
 * a read waits for the write (RAW); disjoint windows do not wait. */
START_TEST(test_hazards) {
  /* ST reads a until 182-ish; the fill of a must wait, the fill of b not */
  int64_t war = cyc("", ".wg 0\n.rf a p0 32x32\n.rf b p1 32x32\n VEC.fill a, 1.0\n"
                        " ST hbm[scratch], a\n VEC.fill a, 2.0\n END\n");
  int64_t free_ = cyc("", ".wg 0\n.rf a p0 32x32\n.rf b p1 32x32\n VEC.fill a, 1.0\n"
                          " ST hbm[scratch], a\n VEC.fill b, 2.0\n END\n");
  ck_assert_msg(war > free_ + 50, "WAR %" G_GINT64_FORMAT " vs none %" G_GINT64_FORMAT, war, free_);
  /* column windows of one region are independent */
  int64_t cols = cyc("", ".wg 0\n.rf a p0 32x32\n VEC.fill a[:, 0:16], 1.0\n"
                         " VEC.fill a[:, 16:32], 1.0\n END\n");
  ck_assert_int_eq(cols, 64);
}
END_TEST

/* The cycle limit also catches work that completes past it after the last
 * issue (a transfer still in flight at END). */
START_TEST(test_cycle_limit_completion) {
  g_autofree char *t = g_strdup_printf("%s\n.problem p1\n.wg 0\n.rf a p0 32x32\n LD a, hbm[x_in]\n END\n",
                                       t_machine(""));
  SimOptions o;
  sim_options_default(&o);
  o.timing_only = TRUE;
  o.max_cycles = 100; /* END issues at 1; the LD completes at 182 */
  SimResult r;
  g_autoptr(GError) err = NULL;
  ck_assert(!t_run(t, &o, &r, &err));
  ck_assert_str_eq(err->message, "test.asm:6:2: error: wg0: cycle limit of 100 cycles exceeded (the WG's "
                                 "work completes at cycle 182; see --max-cycles)");
}
END_TEST

Suite *suite_timing(void) {
  Suite *s = suite_create("timing");
  TCase *tc = tcase_create("timing");
  tcase_add_test(tc, test_vec_cycles);
  tcase_add_test(tc, test_mma_cycles);
  tcase_add_test(tc, test_mma_sharing);
  tcase_add_test(tc, test_sfu_cycles);
  tcase_add_test(tc, test_dma_hbm);
  tcase_add_test(tc, test_dma_remote);
  tcase_add_test(tc, test_dma_depth);
  tcase_add_test(tc, test_hbm_channel);
  tcase_add_test(tc, test_dma_sh);
  tcase_add_test(tc, test_rf_ports);
  tcase_add_test(tc, test_events);
  tcase_add_test(tc, test_red);
  tcase_add_test(tc, test_hazards);
  tcase_add_test(tc, test_cycle_limit_completion);
  suite_add_tcase(s, tc);
  return s;
}
