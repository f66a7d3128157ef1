; run-time error: two contributions to one RED round have different shapes
.machine sms=16 wgs_per_sm=4 rf_kib=64 vl=16 mma_arrays=1 sfu=8 sh_kib=0 dma=2x1 hbm=8 noc=512 multicast=1 reduce=1
.problem p1
.wg 0
.rf s p0 1x32
.rf d p1 1x32
    VEC.fill  s, 1.0
    RED   d, s, ev.sum, 2
    END
.wg 4
.rf s p0 1x64
.rf d p1 1x64
    VEC.fill  s, 1.0
    RED   d, s, ev.sum, 2
    END
