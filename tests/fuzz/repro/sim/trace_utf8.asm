; trace_utf8.asm - tests/asm/tiny_d1.asm with bytes that are not UTF-8 in comments (a
; fuzz_sim finding): the --json report and the trace stay valid JSON (U+FFFD).
.machine sms=16 wgs_per_sm=4 rf_kib=64 vl=16 mma_arrays=1 sfu=8 sh_kib=0 dma=2x1 hbm=8 noc=512 multicast=1 reduce=0
.problem d1 d_model=32 heads=1 d_ff=64 layers=1 history=32 steps=2

.wg 0
.rf wqkv   p0  32x96        ; 3 partitions, resident all steps
.rf wo     p3  32x32
.rf w1     p4  32x64        ; 2 partitions
.rf w2     p6  64x32        ; 2 partitions
.rf kc     p8  64x32        ; K rows: 32 history + new ones
.rf vc     p10 64x32        ; V rows
.rf ln1_g  p12+0    1x32
.rf ln1_b  p12+128  1x32
.rf bqkv   p12+256  1x96
.rf bo     p12+640  1x32
.rf ln2_g  p12+768  1x32
.rf ln2_b  p12+896  1x32
.rf b1     p12+1024 1x64
.rf b2     p12+1280 1x32
.rf x      p13+0    1x32    ; residual stream
.rf h      p13+128  1x32    ; LayerNorm output
.rf qkv    p13+256  1x96
.rf t      p13+640  1x32
.rf mean   p13+768  1x1
.rf var    p13+772  1x1
.rf m      p13+776  1x1
.rf s      p13+780  1x1
.rf sc     p13+1024 1x64    ; attention scores
.rf f      p13+1280 1x64    ; W1 output
.rf g      p13+1536 1x64    ; GELU output
.rf att    p13+1792 1x32
.rf o      p13+2048 1x32
.rf y      p13+2176 1x32
    ; weights and history stay in RF for both steps
    LD    wqkv, hbm[wqkv.l0]    ; d1.k_chunk.ÿþ w1 t0.Ã
    LD    wo, hbm[wo.l0]
    LD    w1, hbm[w1.l0]
    LD    w2, hbm[w2.l0]
    LD    kc[0:32, :], hbm[k_cache.l0]
    LD    vc[0:32, :], hbm[v_cache.l0]
    LD    ln1_g, hbm[ln1_g.l0]
    LD    ln1_b, hbm[ln1_b.l0]
    LD    bqkv, hbm[bqkv.l0]
    LD    bo, hbm[bo.l0]
    LD    ln2_g, hbm[ln2_g.l0]
    LD    ln2_b, hbm[ln2_b.l0]
    LD    b1, hbm[b1.l0]
    LD    b2, hbm[b2.l0]

    ; ---- step 0: input row 0, new position 32 ----
    WAIT  ev.in, 1                     ; host releases x_in row 0
    LD    x, hbm[x_in + 0]
    VEC.rsum  mean, x
    VEC.muli  mean, mean, 0.03125
    VEC.sub   h, x, mean
    VEC.mul   t, h, h
    VEC.rsum  var, t
    VEC.muli  var, var, 0.03125
    VEC.addi  var, var, 1e-5
    SFU.rsqrt var, var
    VEC.mul   h, h, var
    VEC.mul   h, h, ln1_g
    VEC.add   h, h, ln1_b
    MMA.z     qkv, h, wqkv                 ; q | k | v
    VEC.add   qkv, qkv, bqkv
    VEC.copy  kc[32:33, :], qkv[:, 32:64]
    VEC.copy  vc[32:33, :], qkv[:, 64:96]
    ST    hbm[k_cache.l0 + 4096], kc[32:33, :]   ; direct K/V writeback
    ST    hbm[v_cache.l0 + 4096], vc[32:33, :]
    MMA.z.t   sc[:, 0:33], qkv[:, 0:32], kc[0:33, :]
    VEC.muli  sc[:, 0:33], sc[:, 0:33], 0.17677669529663687
    VEC.rmax  m, sc[:, 0:33]
    VEC.sub   sc[:, 0:33], sc[:, 0:33], m
    SFU.exp   sc[:, 0:33], sc[:, 0:33]
    VEC.rsum  s, sc[:, 0:33]
    SFU.recip s, s
    VEC.mul   sc[:, 0:33], sc[:, 0:33], s
    MMA.z     att, sc[:, 0:33], vc[0:33, :]
    MMA.z     o, att, wo
    VEC.add   o, o, bo
    VEC.add   x, x, o
    VEC.rsum  mean, x
    VEC.muli  mean, mean, 0.03125
    VEC.sub   h, x, mean
    VEC.mul   t, h, h
    VEC.rsum  var, t
    VEC.muli  var, var, 0.03125
    VEC.addi  var, var, 1e-5
    SFU.rsqrt var, var
    VEC.mul   h, h, var
    VEC.mul   h, h, ln2_g
    VEC.add   h, h, ln2_b
    MMA.z     f, h, w1
    VEC.add   f, f, b1
    VEC.mul   g, f, f                      ; GELU, tanh form
    VEC.mul   g, g, f
    VEC.muli  g, g, 0.044715
    VEC.add   g, g, f
    VEC.muli  g, g, 0.7978845608028654
    SFU.tanh  g, g
    VEC.addi  g, g, 1.0
    VEC.mul   g, g, f
    VEC.muli  g, g, 0.5
    MMA.z     y, g, w2
    VEC.add   y, y, b2
    VEC.add   x, x, y
    ST    hbm[out + 0], x                 ; releases the next input

    ; ---- step 1: input row 1, new position 33 ----
    WAIT  ev.in, 2                     ; host releases x_in row 1
    LD    x, hbm[x_in + 128]
    VEC.rsum  mean, x
    VEC.muli  mean, mean, 0.03125
    VEC.sub   h, x, mean
    VEC.mul   t, h, h
    VEC.rsum  var, t
    VEC.muli  var, var, 0.03125
    VEC.addi  var, var, 1e-5
    SFU.rsqrt var, var
    VEC.mul   h, h, var
    VEC.mul   h, h, ln1_g
    VEC.add   h, h, ln1_b
    MMA.z     qkv, h, wqkv                 ; q | k | v
    VEC.add   qkv, qkv, bqkv
    VEC.copy  kc[33:34, :], qkv[:, 32:64]
    VEC.copy  vc[33:34, :], qkv[:, 64:96]
    ST    hbm[k_cache.l0 + 4224], kc[33:34, :]   ; direct K/V writeback
    ST    hbm[v_cache.l0 + 4224], vc[33:34, :]
    MMA.z.t   sc[:, 0:34], qkv[:, 0:32], kc[0:34, :]
    VEC.muli  sc[:, 0:34], sc[:, 0:34], 0.17677669529663687
    VEC.rmax  m, sc[:, 0:34]
    VEC.sub   sc[:, 0:34], sc[:, 0:34], m
    SFU.exp   sc[:, 0:34], sc[:, 0:34]
    VEC.rsum  s, sc[:, 0:34]
    SFU.recip s, s
    VEC.mul   sc[:, 0:34], sc[:, 0:34], s
    MMA.z     att, sc[:, 0:34], vc[0:34, :]
    MMA.z     o, att, wo
    VEC.add   o, o, bo
    VEC.add   x, x, o
    VEC.rsum  mean, x
    VEC.muli  mean, mean, 0.03125
    VEC.sub   h, x, mean
    VEC.mul   t, h, h
    VEC.rsum  var, t
    VEC.muli  var, var, 0.03125
    VEC.addi  var, var, 1e-5
    SFU.rsqrt var, var
    VEC.mul   h, h, var
    VEC.mul   h, h, ln2_g
    VEC.add   h, h, ln2_b
    MMA.z     f, h, w1
    VEC.add   f, f, b1
    VEC.mul   g, f, f                      ; GELU, tanh form
    VEC.mul   g, g, f
    VEC.muli  g, g, 0.044715
    VEC.add   g, g, f
    VEC.muli  g, g, 0.7978845608028654
    SFU.tanh  g, g
    VEC.addi  g, g, 1.0
    VEC.mul   g, g, f
    VEC.muli  g, g, 0.5
    MMA.z     y, g, w2
    VEC.add   y, y, b2
    VEC.add   x, x, y
    ST    hbm[out + 128], x                 ; releases the next input
    END
