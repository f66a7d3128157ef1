; run-time error: D1's input row is read before the host releases it
.machine sms=16 wgs_per_sm=4 rf_kib=64 vl=16 mma_arrays=1 sfu=8 sh_kib=0 dma=2x1 hbm=8 noc=512 multicast=1 reduce=0
.problem d1
.wg 0
.rf x p0 1x128
    LD    x, hbm[x_in]         ; missing: WAIT ev.in, 1
    END
