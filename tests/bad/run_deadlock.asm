; run-time error: two WGs wait for each other
.machine sms=16 wgs_per_sm=4 rf_kib=64 vl=16 mma_arrays=1 sfu=8 sh_kib=0 dma=2x1 hbm=8 noc=512 multicast=1 reduce=0
.problem p1
.wg 0
    WAIT  ev.a, 1
    SIG   ev.b, 1
    END
.wg 9
    WAIT  ev.b, 1
    SIG   ev.a, 1
    END
