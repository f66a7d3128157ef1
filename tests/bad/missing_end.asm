; the section of WG 3 runs into WG 4's
.machine sms=16 wgs_per_sm=4 rf_kib=64 vl=16 mma_arrays=1 sfu=8 sh_kib=0 dma=2x1 hbm=8 noc=512 multicast=1 reduce=0
.problem d1 d_model=128 heads=4 d_ff=512 layers=2 history=128 steps=8

.wg 3
.rf x p0 1x128
    WAIT ev.in, 1
    LD x, hbm[x_in]
.wg 4
    END
