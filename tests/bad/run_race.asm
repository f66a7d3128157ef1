; run-time error: wg1 reads a region another WG is still writing into
.machine sms=16 wgs_per_sm=4 rf_kib=64 vl=16 mma_arrays=1 sfu=8 sh_kib=0 dma=2x1 hbm=8 noc=512 multicast=1 reduce=0
.problem p1
.wg 0
.rf a p0 32x32
    VEC.fill  a, 1.0
    ST    wg5.x, a
    END
.wg 5
.rf x p0 32x32
.rf y p1 32x32
    WAITT 70
    VEC.copy  y, x             ; missing: WAIT for an event from wg0
    END
