; run-time error: a multicast load lands in wg5's region while wg4's copy into it is in flight
.machine sms=16 wgs_per_sm=4 rf_kib=64 vl=16 mma_arrays=1 sfu=8 sh_kib=0 dma=2x1 hbm=8 noc=512 multicast=1 reduce=0
.problem p1
.wg 0
.rf m p2 32x32
    WAITT 70
    LD.mc m, hbm[x_in], stride 256, {0, 5}
    END
.wg 4
.rf b p0 32x32
    VEC.fill  b, 2.0
    ST    wg5.m, b
    END
.wg 5
.rf m p2 32x32
    END
