; run-time error: a VEC op reads RF that nothing has written
.machine sms=16 wgs_per_sm=4 rf_kib=64 vl=16 mma_arrays=1 sfu=8 sh_kib=0 dma=2x1 hbm=8 noc=512 multicast=1 reduce=0
.problem p1
.wg 3
.rf a p0 32x32
.rf b p1 32x32
    VEC.fill  a[0:16, :], 1.0
    VEC.add   b, a, a          ; rows 16..31 of a were never written
    END
