; run-time error: the second input row is read after only the first was released
.machine sms=16 wgs_per_sm=4 rf_kib=64 vl=16 mma_arrays=1 sfu=8 sh_kib=0 dma=2x1 hbm=8 noc=512 multicast=1 reduce=0
.problem d1
.wg 0
.rf x p0 2x128
    WAIT  ev.in, 1
    LD    x, hbm[x_in]         ; rows 0 and 1, but only row 0 is out
    END
