; run-time error: wg0 copies into wg5's region x after wg5's store has read
; it, but without waiting for wg5's signal that x is free: had wg0 been
; faster, the store would have read wg0's data (write after read across WGs,
; not overlapping in time in this run)
.machine sms=16 wgs_per_sm=4 rf_kib=64 vl=16 mma_arrays=1 sfu=8 sh_kib=0 dma=2x1 hbm=8 noc=512 multicast=1 reduce=0
.problem p1
.wg 0
.rf a p0 32x32
    VEC.fill  a, 1.0
    WAITT 400
    ST    wg5.x, a             ; missing: WAIT ev.free, 1
    END
.wg 5
.rf x p0 32x32
    VEC.fill  x, 3.0
    ST    hbm[scratch], x
    SIG   ev.free, 1
    END
