/* gen_bench.c - writes the synthetic P1-sized benchmark program for
 * `make bench`: 64 WGs, each streaming 32x32 weight blocks from HBM into a
 * double buffer, multiplying them (30,080 MMA blocks in all) and running a
 * prefill-like mix of VEC/SFU row operations (> 500,000 other instructions).
 * Usage: gen_bench [iterations per WG]  (default 470) */
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
  int iters = argc > 1 ? atoi(argv[1]) : 470;
  if (iters < 1 || iters > 100000) {
    fprintf(stderr, "gen_bench: iterations must be 1..100000\n");
    return 2;
  }
  printf("; synthetic benchmark: %d iterations per WG over 64 WGs\n", iters);
  printf(".machine sms=16 wgs_per_sm=4 rf_kib=64 vl=16 mma_arrays=1 sfu=8 sh_kib=0 "
         "dma=2x1 hbm=8 noc=512 multicast=1 reduce=0\n");
  printf(".problem p1 d_model=256 heads=8 d_ff=1024 layers=2 seqs=2 rows=256\n");
  for (int w = 0; w < 64; w++) {
    printf("\n.wg %d\n", w);
    printf(".rf a     p0  32x32\n.rf b0    p1  32x32\n.rf b1    p2  32x32\n");
    printf(".rf acc   p3  32x32\n.rf r     p4+0 4x32\n.rf q     p4+512 4x32\n");
    printf(".rf col   p4+1024 4x1\n.rf bias  p4+1040 1x32\n");
    /* the activation block: 32 rows of x_in; weights: w1.l0 as 32x32 blocks */
    printf("    LD a, hbm[x_in + %d], stride 256\n", (w % 16) * 32 * 4 * 256 % (512 * 256 * 4));
    printf("    LD bias, hbm[b1.l0]\n");
    printf("    LD r, hbm[x_in + %d]\n", w * 512);
    printf("    VEC.fill acc, 0.0\n");
    for (int i = 0; i < iters; i++) {
      int blk = (w * 7 + i) % 256; /* w1.l0 is 256x1024: 8 x 32 blocks */
      int row = blk / 32, colb = blk % 32;
      int off = (row * 32 * 1024 + colb * 32) * 4;
      const char *b = i % 2 ? "b1" : "b0";
      printf("    LD %s, hbm[w1.l0 + %d], stride 1024\n", b, off);
      printf("    MMA acc, a, %s\n", b);
      for (int k = 0; k < 3; k++) {
        printf("    VEC.mul q, r, bias\n");
        printf("    VEC.add q, q, r\n");
        printf("    VEC.rmax col, q\n");
        printf("    VEC.sub q, q, col\n");
        printf("    VEC.muli q, q, 0.5\n");
      }
      printf("    SFU.tanh q, q\n");
    }
    printf("    ST hbm[scratch + %d], acc\n", w * 4096);
    printf("    END\n");
  }
  return 0;
}
