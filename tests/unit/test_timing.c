/* test_timing.c - every resource of docs/machine.md §4 in isolation: the
 * exact cycle counts its formulas give for tiny programs. */
#include <math.h>
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

/* A compute instruction holds the READ port of every partition its sources
 * touch (docs/machine.md §4 "Compute timing"), and an accumulating MMA reads
 * c.  Here c (16x32) and e (16x32) share partition p2; the ST of e reads p2
 * through its read port while the MMA runs.
 *   fills (one VEC unit, 512 or 1024 elements / 16): e [0,32), a [32,64),
 *   b [64,128), c [128,160); the MMA waits for c: issues at 160, [160,192),
 *   holding read ports p0, p1, p2 and write port p2.  ST issues at 161,
 *   requests 169..200 (2 KiB = 32 lines); piece k is requested at 169+k but
 *   p2's read port is free only from 192: it reads at 192+k, NoC out
 *   [193+k, 194+k) + 8, channel 202+k, done 302+k; last k = 31: 333, +1.
 * MMA.z does not read c: the ST reads at 169+k, last piece done 279+31 = 310,
 * +1 = 311.  A VEC op reading x in p2 does the same as the MMA reading c:
 *   fills e [0,32), x [32,64); VEC.add z, x, x at 64: [64,96) holds p2's read
 *   port; ST at 65, requests 73..104 read at 96+k: last 127 + 110 = 237, +1. */
START_TEST(test_rf_read_ports) {
  const char *mma = ".wg 0\n.rf a p0 16x32\n.rf b p1 32x32\n.rf c p2+0 16x32\n.rf e p2+2048 16x32\n"
                    " VEC.fill e, 2.0\n VEC.fill a, 1.0\n VEC.fill b, 1.0\n VEC.fill c, 0.0\n"
                    " %s c, a, b\n ST hbm[scratch], e\n END\n";
  g_autofree char *acc = g_strdup_printf(mma, "MMA"), *z = g_strdup_printf(mma, "MMA.z");
  ck_assert_int_eq(cyc("", acc), 334);
  ck_assert_int_eq(cyc("", z), 311);
  ck_assert_int_eq(cyc("", ".wg 0\n.rf x p2+0 16x32\n.rf e p2+2048 16x32\n.rf z p4 16x32\n"
                           " VEC.fill e, 2.0\n VEC.fill x, 1.0\n VEC.add z, x, x\n ST hbm[scratch], e\n END\n"),
                   238);
}
END_TEST

/* LD.mc crosses each destination SM's NoC in-link ONCE, whatever the number
 * of WGs it serves there (§4 "LD.mc").  On a 64-bit NoC (8 B per cycle) a
 * 64-B piece holds the link 8 cycles, so a plain 4 KiB LD is link-bound:
 * 108 + 8 x 63 + 8 + 8 + 1 + 1 = 630 (test_dma_hbm).  Multicast to WGs 0 and
 * 1 (both SM 0), or to all four WGs of SM 0, still crosses SM 0's link once
 * per piece: 630.  One crossing per WG would double or quadruple the link
 * time. */
START_TEST(test_mc_one_crossing_per_sm) {
  const char *rest = ".wg 1\n.rf m p0 32x32\n END\n.wg 2\n.rf m p0 32x32\n END\n.wg 3\n.rf m p0 32x32\n END\n";
  g_autofree char *two = g_strdup_printf(".wg 0\n.rf m p0 32x32\n LD.mc m, hbm[x_in], {1, 0}\n END\n%s", rest);
  g_autofree char *four = g_strdup_printf(".wg 0\n.rf m p0 32x32\n LD.mc m, hbm[x_in], {3, 2, 1, 0}\n END\n%s",
                                          rest);
  ck_assert_int_eq(cyc("noc=64", two), 630);
  ck_assert_int_eq(cyc("noc=64", four), 630);
}
END_TEST

/* RED with three contributors on three SMs, arriving in DESCENDING WG order
 * (WG 8 at once, WG 4 after WAITT 20, WG 0 after WAITT 40), with values for
 * which FP32 addition order matters: 2^24 (WG 0), 1 (WG 4), -2^24 (WG 8).
 * Ascending WG order (§3): (0 + 2^24) + 1 = 2^24 (2^24 + 1 is not an FP32:
 * ties to even), + (-2^24) = 0.  Arrival (or descending) order gives
 * (-2^24 + 1) + 2^24 = 1.
 * Timing (§4 "RED timing"): fills [0,1).  WG 8's RED at 1: out-link [1,2)
 * +8 -> 10, unit [10,11); WG 4 at 21 -> 30, unit [30,31); WG 0 at 41 -> 50,
 * unit [50,51).  Sum leaves 51 + 8 = 59, in-links [59,60) + 8 = 68, written
 * 68 -> usable at 69.  Each WG then stores d (1 line, its own SM's link and
 * its own channel): issue 69, request 77, read 77, out [78,79) + 8, channel
 * 87, done 187, complete 188.
 * Energy: REDUCE 3 x 16 floats x 2 = 96 pJ. */
START_TEST(test_red_three_ascending) {
  Problem prob;
  Abi abi;
  wl_problem_default(&prob, PROB_P1);
  wl_abi_build(&prob, &abi);
  static const struct { int wg, wait; const char *v; } c[] = {{8, 0, "-16777216.0"}, {4, 20, "1.0"},
                                                              {0, 40, "16777216.0"}};
  GString *g = g_string_new(t_machine("reduce=1"));
  g_string_append(g, "\n.problem p1\n");
  for (int i = 0; i < 3; i++) {
    g_string_append_printf(g, ".wg %d\n.rf s p0 1x16\n.rf d p1 1x16\n VEC.fill s, %s\n", c[i].wg, c[i].v);
    if (c[i].wait) g_string_append_printf(g, " WAITT %d\n", c[i].wait);
    g_string_append_printf(g, " RED d, s, ev.g, 3\n ST hbm[scratch + %d], d\n END\n", 16 * c[i].wg);
  }
  SimOptions o;
  sim_options_default(&o);
  o.keep_hbm = TRUE;
  SimResult r;
  g_autoptr(GError) err = NULL;
  ck_assert_msg(t_run(g->str, &o, &r, &err), "%s", err ? err->message : "");
  ck_assert_int_eq(r.cycles, 188);
  ck_assert_double_eq_tol(r.unit_energy_uj[UC_RED], 96e-6, 1e-15);
  const float *sc = r.hbm + wl_abi_lookup(&abi, "scratch")->addr / 4;
  for (int i = 0; i < 3; i++)
    for (int e = 0; e < 16; e++) {
      float got = sc[4 * c[i].wg + e];
      ck_assert_msg(got == 0.0f && !signbit(got), "wg%d d[%d] = %.9g, expected 0 (ascending WG order)", c[i].wg,
                    e, got);
    }
  sim_result_clear(&r);
  wl_abi_clear(&abi);
  g_string_free(g, TRUE);
}
END_TEST

/* D1's host (§3): input row 0 is released at T_HOST_LATENCY = 200; once all
 * d_model = 128 values of output row 0 are stored, row 1 follows 200 cycles
 * later.  One WG, default D1 problem (rows of 512 B = 8 lines):
 *   WAIT satisfied at 200, LD at 201: requests 209..216, last: channel 216,
 *   data 316, NoC [316,317) + 8, RF 325 -> 326, complete 327.
 *   ST of the row (RAW on x) at 327: requests 335..342, last: read 342, NoC
 *   [343,344) + 8, channel 352, done 452, complete 453: row 0 stored.
 *   Row 1 released at 453 + 200 = 653; WAIT issues at 653, LD at 654:
 *   complete 654 + 126 = 780. */
START_TEST(test_host_latency) {
  g_autofree char *one = g_strdup_printf("%s\n.problem d1\n.wg 0\n.rf x p0 1x128\n"
                                         " WAIT ev.in, 1\n LD x, hbm[x_in]\n END\n", t_machine(""));
  ck_assert_int_eq(t_cycles(one), 327);
  g_autofree char *two = g_strdup_printf("%s\n.problem d1\n.wg 0\n.rf x p0 1x128\n.rf y p1 1x128\n"
                                         " WAIT ev.in, 1\n LD x, hbm[x_in]\n ST hbm[out], x\n"
                                         " WAIT ev.in, 2\n LD y, hbm[x_in + 512]\n END\n", t_machine(""));
  ck_assert_int_eq(t_cycles(two), 780);
}
END_TEST

/* Races across WGs are decided by the events between the accesses (happens
 * before), not only by overlap in time (docs/machine.md §3): ordered
 * programs pass, through a chain of WGs too; disjoint windows of one region
 * do not conflict; an event from a WG that is not itself ordered after the
 * writer orders nothing. */
static const char *race_msg(const char *body) {
  static char msg[512];
  g_autofree char *t = g_strdup_printf("%s\n.problem p1\n%s", t_machine("reduce=1"), body);
  SimOptions o;
  sim_options_default(&o);
  o.timing_only = TRUE;
  SimResult r;
  g_autoptr(GError) err = NULL;
  if (t_run(t, &o, &r, &err)) {
    sim_result_clear(&r);
    return "";
  }
  g_strlcpy(msg, err->message, sizeof msg);
  return msg;
}

START_TEST(test_race_order) {
  /* write after read, ordered by wg5's signal */
  ck_assert_str_eq(race_msg(".wg 0\n.rf a p0 32x32\n VEC.fill a, 1.0\n WAIT ev.free, 1\n ST wg5.x, a\n END\n"
                            ".wg 5\n.rf x p0 32x32\n VEC.fill x, 3.0\n ST hbm[scratch], x\n SIG ev.free, 1\n END\n"),
                   "");
  /* read after write, ordered by wg0's signal */
  const char *raw = ".wg 0\n.rf a p0 32x32\n VEC.fill a, 1.0\n ST wg5.x, a\n SIG ev.ready, 1\n END\n"
                    ".wg 5\n.rf x p0 32x32\n.rf y p1 32x32\n WAIT ev.ready, 1\n VEC.copy y, x\n END\n";
  ck_assert_str_eq(race_msg(raw), "");
  /* ... through wg1, which waits for wg0 and signals wg5 */
  ck_assert_str_eq(race_msg(".wg 0\n.rf a p0 32x32\n VEC.fill a, 1.0\n ST wg5.x, a\n SIG ev.a, 1\n END\n"
                            ".wg 1\n WAIT ev.a, 1\n SIG ev.b, 1\n END\n"
                            ".wg 5\n.rf x p0 32x32\n.rf y p1 32x32\n WAIT ev.b, 1\n VEC.copy y, x\n END\n"),
                   "");
  /* ... but not by wg1 when wg1 does not wait for wg0 */
  ck_assert_str_eq(race_msg(".wg 0\n.rf a p0 32x32\n VEC.fill a, 1.0\n ST wg5.x, a\n END\n"
                            ".wg 1\n WAITT 1000\n SIG ev.b, 1\n END\n"
                            ".wg 5\n.rf x p0 32x32\n.rf y p1 32x32\n WAIT ev.b, 1\n VEC.copy y, x\n END\n"),
                   "test.asm:16:2: error: wg5: race: VEC.copy accesses region 'x' that a transfer from wg0 "
                   "(line 6) wrote at cycle 156 with no event from wg0 since (wait for an event first)");
  /* disjoint windows of one region: wg0 writes rows 16..31 while wg5 reads rows 0..15 */
  ck_assert_str_eq(race_msg(".wg 0\n.rf a p0 16x32\n VEC.fill a, 1.0\n WAITT 300\n ST wg5.x[16:32, 0:32], a\n END\n"
                            ".wg 5\n.rf x p0 32x32\n.rf y p1 16x32\n VEC.fill x[0:16, 0:32], 2.0\n"
                            " VEC.copy y, x[0:16, 0:32]\n END\n"),
                   "");
  /* write after write from two WGs: wg1's copy must be ordered after wg0's */
  ck_assert_str_eq(race_msg(".wg 0\n.rf a p0 32x32\n VEC.fill a, 1.0\n ST wg5.x, a\n SIG ev.a, 1\n END\n"
                            ".wg 1\n.rf b p0 32x32\n VEC.fill b, 2.0\n WAIT ev.a, 1\n ST wg5.x, b\n END\n"
                            ".wg 5\n.rf x p0 32x32\n END\n"),
                   "");
  ck_assert_str_eq(race_msg(".wg 0\n.rf a p0 32x32\n VEC.fill a, 1.0\n ST wg5.x, a\n END\n"
                            ".wg 1\n.rf b p0 32x32\n VEC.fill b, 2.0\n WAITT 1000\n ST wg5.x, b\n END\n"
                            ".wg 5\n.rf x p0 32x32\n END\n"),
                   "test.asm:12:2: error: wg1: race: ST writes into wg5's region 'x' that a transfer from wg0 "
                   "(line 6) wrote at cycle 156 with no event from wg0 since (wait for its signal first)");
  /* a RED round orders its contributors: wg1 writes into wg0's x after the round */
  ck_assert_str_eq(race_msg(".wg 0\n.rf x p0 1x16\n.rf s p1 1x16\n VEC.fill x, 1.0\n VEC.copy s, x\n"
                            " RED s, s, ev.r, 2\n END\n"
                            ".wg 1\n.rf a p0 1x16\n.rf t p1 1x16\n VEC.fill a, 2.0\n RED t, a, ev.r, 2\n"
                            " WAIT ev.r, 1\n ST wg0.x, a\n END\n"),
                   "");
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
  tcase_add_test(tc, test_rf_read_ports);
  tcase_add_test(tc, test_mc_one_crossing_per_sm);
  tcase_add_test(tc, test_red_three_ascending);
  tcase_add_test(tc, test_host_latency);
  tcase_add_test(tc, test_race_order);
  suite_add_tcase(s, tc);
  return s;
}
