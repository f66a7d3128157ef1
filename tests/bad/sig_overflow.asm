; SIG counts are at most 10^18: two of these used to overflow the event counter
.machine sms=16 wgs_per_sm=4 rf_kib=64 vl=16 mma_arrays=1 sfu=8 sh_kib=0 dma=2x1 hbm=8 noc=512 multicast=1 reduce=0
.problem p1
.wg 0
    SIG   ev.a, 9223372036854775807
    SIG   ev.a, 9223372036854775807
    WAIT  ev.a, 1
    END
