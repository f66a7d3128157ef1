; tiny_p1.asm - a hand-written prefill: d_model 32, 1 head, d_ff 64, 1 layer,
; 1 sequence of 32 rows.  wg0 runs attention, wg5 (another SM) the FFN; they
; exchange rows RF to RF and synchronise with events.
.machine sms=16 wgs_per_sm=4 rf_kib=64 vl=16 mma_arrays=1 sfu=8 sh_kib=0 dma=2x1 hbm=8 noc=512 multicast=1 reduce=0
.problem p1 d_model=32 heads=1 d_ff=64 layers=1 seqs=1 rows=32

.wg 0
.rf x      p0   32x32       ; residual stream
.rf h      p1   32x32       ; LayerNorm output
.rf qkv    p2   32x96       ; 3 partitions
.rf wqkv   p5   32x96
.rf sc     p8   32x32       ; scores / probabilities
.rf mask   p9   32x32       ; causal mask: 0 on and below the diagonal
.rf att    p10  32x32
.rf wo     p11  32x32
.rf o      p12  32x32
.rf y      p13  32x32       ; FFN output, written by wg5
.rf ln1_g  p14+0    1x32
.rf ln1_b  p14+128  1x32
.rf bqkv   p14+256  1x96
.rf bo     p14+640  1x32
.rf ln2_g  p14+768  1x32
.rf ln2_b  p14+896  1x32
.rf mean   p14+1024 32x1
.rf var    p14+1152 32x1
.rf m      p14+1280 32x1
.rf s      p14+1408 32x1
.rf t      p15  32x32
    LD    x, hbm[x_in]
    LD    wqkv, hbm[wqkv.l0]
    LD    wo, hbm[wo.l0]
    LD    ln1_g, hbm[ln1_g.l0]
    LD    ln1_b, hbm[ln1_b.l0]
    LD    bqkv, hbm[bqkv.l0]
    LD    bo, hbm[bo.l0]
    LD    ln2_g, hbm[ln2_g.l0]
    LD    ln2_b, hbm[ln2_b.l0]
    VEC.fill  mask, -1e30
    VEC.fill  mask[0:1, 0:1], 0.0
    VEC.fill  mask[1:2, 0:2], 0.0
    VEC.fill  mask[2:3, 0:3], 0.0
    VEC.fill  mask[3:4, 0:4], 0.0
    VEC.fill  mask[4:5, 0:5], 0.0
    VEC.fill  mask[5:6, 0:6], 0.0
    VEC.fill  mask[6:7, 0:7], 0.0
    VEC.fill  mask[7:8, 0:8], 0.0
    VEC.fill  mask[8:9, 0:9], 0.0
    VEC.fill  mask[9:10, 0:10], 0.0
    VEC.fill  mask[10:11, 0:11], 0.0
    VEC.fill  mask[11:12, 0:12], 0.0
    VEC.fill  mask[12:13, 0:13], 0.0
    VEC.fill  mask[13:14, 0:14], 0.0
    VEC.fill  mask[14:15, 0:15], 0.0
    VEC.fill  mask[15:16, 0:16], 0.0
    VEC.fill  mask[16:17, 0:17], 0.0
    VEC.fill  mask[17:18, 0:18], 0.0
    VEC.fill  mask[18:19, 0:19], 0.0
    VEC.fill  mask[19:20, 0:20], 0.0
    VEC.fill  mask[20:21, 0:21], 0.0
    VEC.fill  mask[21:22, 0:22], 0.0
    VEC.fill  mask[22:23, 0:23], 0.0
    VEC.fill  mask[23:24, 0:24], 0.0
    VEC.fill  mask[24:25, 0:25], 0.0
    VEC.fill  mask[25:26, 0:26], 0.0
    VEC.fill  mask[26:27, 0:27], 0.0
    VEC.fill  mask[27:28, 0:28], 0.0
    VEC.fill  mask[28:29, 0:29], 0.0
    VEC.fill  mask[29:30, 0:30], 0.0
    VEC.fill  mask[30:31, 0:31], 0.0
    VEC.fill  mask[31:32, 0:32], 0.0
    VEC.rsum  mean, x
    VEC.muli  mean, mean, 0.03125
    VEC.sub   h, x, mean              ; column broadcast
    VEC.mul   t, h, h
    VEC.rsum  var, t
    VEC.muli  var, var, 0.03125
    VEC.addi  var, var, 1e-5
    SFU.rsqrt var, var
    VEC.mul   h, h, var
    VEC.mul   h, h, ln1_g                ; row broadcast
    VEC.add   h, h, ln1_b
    MMA.z     qkv, h, wqkv
    VEC.add   qkv, qkv, bqkv
    ST    hbm[k_out.l0], qkv[:, 32:64]      ; K and V straight to the ABI
    ST    hbm[v_out.l0], qkv[:, 64:96]
    MMA.z.t   sc, qkv[:, 0:32], qkv[:, 32:64]
    VEC.muli  sc, sc, 0.17677669529663687
    VEC.add   sc, sc, mask
    VEC.rmax  m, sc
    VEC.sub   sc, sc, m
    SFU.exp   sc, sc
    VEC.rsum  s, sc
    SFU.recip s, s
    VEC.mul   sc, sc, s
    MMA.z     att, sc, qkv[:, 64:96]
    MMA.z     o, att, wo
    VEC.add   o, o, bo
    VEC.add   x, x, o
    VEC.rsum  mean, x
    VEC.muli  mean, mean, 0.03125
    VEC.sub   h, x, mean              ; column broadcast
    VEC.mul   t, h, h
    VEC.rsum  var, t
    VEC.muli  var, var, 0.03125
    VEC.addi  var, var, 1e-5
    SFU.rsqrt var, var
    VEC.mul   h, h, var
    VEC.mul   h, h, ln2_g                ; row broadcast
    VEC.add   h, h, ln2_b
    ST    wg5.h2, h                         ; to the FFN worker
    SIG   ev.h2, 1
    WAIT  ev.y, 1
    VEC.add   x, x, y
    ST    hbm[out], x
    END

.wg 5
.rf h2     p0   32x32
.rf w1     p1   32x64
.rf f      p3   32x64
.rf g      p5   32x64
.rf w2     p7   64x32
.rf yy     p9   32x32
.rf b1     p10+0    1x64
.rf b2     p10+256  1x32
    LD    w1, hbm[w1.l0]                    ; prefetch while wg0 works
    LD    w2, hbm[w2.l0]
    LD    b1, hbm[b1.l0]
    LD    b2, hbm[b2.l0]
    WAIT  ev.h2, 1
    MMA.z     f, h2, w1
    VEC.add   f, f, b1
    VEC.mul   g, f, f
    VEC.mul   g, g, f
    VEC.muli  g, g, 0.044715
    VEC.add   g, g, f
    VEC.muli  g, g, 0.7978845608028654
    SFU.tanh  g, g
    VEC.addi  g, g, 1.0
    VEC.mul   g, g, f
    VEC.muli  g, g, 0.5
    MMA.z     yy, g, w2
    VEC.add   yy, yy, b2
    ST    wg0.y, yy
    SIG   ev.y, 1
    END
