; run-time error: wg0 copies into wg5's region d while wg5's RED result into d is pending
.machine sms=16 wgs_per_sm=4 rf_kib=64 vl=16 mma_arrays=1 sfu=8 sh_kib=0 dma=2x1 hbm=8 noc=512 multicast=1 reduce=1
.problem p1
.wg 0
.rf a p0 1x32
    VEC.fill  a, 1.0
    WAITT 20
    ST    wg5.d, a
    END
.wg 4
.rf s p0 1x32
.rf d p1 1x32
    VEC.fill  s, 1.0
    WAITT 100
    RED   d, s, ev.g, 2
    END
.wg 5
.rf s p0 1x32
.rf d p1 1x32
    VEC.fill  s, 1.0
    RED   d, s, ev.g, 2
    END
