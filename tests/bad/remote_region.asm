; ST into another WG's region: WG 5 must declare it
.machine sms=16 wgs_per_sm=4 rf_kib=64 vl=16 mma_arrays=1 sfu=8 sh_kib=0 dma=2x1 hbm=8 noc=512 multicast=1 reduce=0
.problem d1 d_model=128 heads=4 d_ff=512 layers=2 history=128 steps=8

.wg 4
.rf part p0 1x32
    VEC.fill part, 1.0
    ST wg5.sum[0:1, 0:32], part
    END
.wg 5
.rf sums p0 4x32
    END
