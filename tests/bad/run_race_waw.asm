; run-time error: two WGs write one region of wg5 and the first transfer has not landed
.machine sms=16 wgs_per_sm=4 rf_kib=64 vl=16 mma_arrays=1 sfu=8 sh_kib=0 dma=2x1 hbm=8 noc=512 multicast=1 reduce=0
.problem p1
.wg 0
.rf a p0 32x32
    VEC.fill  a, 1.0
    ST    wg5.x, a
    END
.wg 1
.rf b p0 32x32
    VEC.fill  b, 2.0
    WAITT 80
    ST    wg5.x, b             ; missing: WAIT for wg5 to have consumed wg0's data
    END
.wg 5
.rf x p0 32x32
    END
