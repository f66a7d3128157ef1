; run-time error: wg0's copy into wg5's region x lands before wg5 reads x,
; but no event orders the two: wg5 only waited for time (read after write
; across WGs, not overlapping in time in this run)
.machine sms=16 wgs_per_sm=4 rf_kib=64 vl=16 mma_arrays=1 sfu=8 sh_kib=0 dma=2x1 hbm=8 noc=512 multicast=1 reduce=0
.problem p1
.wg 0
.rf a p0 32x32
    VEC.fill  a, 1.0
    ST    wg5.x, a
    SIG   ev.ready, 1
    END
.wg 5
.rf x p0 32x32
.rf y p1 32x32
    WAITT 2000                 ; missing: WAIT ev.ready, 1
    VEC.copy  y, x
    END
