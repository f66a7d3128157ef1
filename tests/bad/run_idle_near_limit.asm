; numerics fail, fast: a WG idles until just under the cycle limit; the power trace
; costs memory per action, not per cycle (the hottest window is the last one)
.machine sms=16 wgs_per_sm=4 rf_kib=64 vl=16 mma_arrays=1 sfu=8 sh_kib=0 dma=2x1 hbm=8 noc=512 multicast=1 reduce=0
.problem p1
.wg 0
.rf a p0 32x32
    WAITT 99998000
    VEC.fill  a, 1.0
    END
