; WAITT cycles are at most 10^18: t + N must not overflow the clock
.machine sms=16 wgs_per_sm=4 rf_kib=64 vl=16 mma_arrays=1 sfu=8 sh_kib=0 dma=2x1 hbm=8 noc=512 multicast=1 reduce=0
.problem p1
.wg 0
    WAITT 1
    WAITT 9223372036854775807
    END
