; an ABI name that does not exist
.machine sms=16 wgs_per_sm=4 rf_kib=64 vl=16 mma_arrays=1 sfu=8 sh_kib=0 dma=2x1 hbm=8 noc=512 multicast=1 reduce=0
.problem d1 d_model=128 heads=4 d_ff=512 layers=2 history=128 steps=8

.wg 0
.rf w p0 32x32
    LD w, hbm[wqkv.l2], stride 384
    END
