; every LD.mc target must declare the region with the same shape
.machine sms=16 wgs_per_sm=4 rf_kib=64 vl=16 mma_arrays=1 sfu=8 sh_kib=0 dma=2x1 hbm=8 noc=512 multicast=1 reduce=0
.problem d1 d_model=128 heads=4 d_ff=512 layers=2 history=128 steps=8

.wg 0
.rf kv p0 32x32
    LD.mc kv, hbm[k_cache.l0], {0, 1, 2}
    END
.wg 1
.rf kv p0 32x32
    END
.wg 2
.rf kv p0 16x32
    END
