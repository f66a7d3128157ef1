; a region that straddles two partitions
.machine sms=16 wgs_per_sm=4 rf_kib=64 vl=16 mma_arrays=1 sfu=8 sh_kib=0 dma=2x1 hbm=8 noc=512 multicast=1 reduce=0
.problem d1 d_model=128 heads=4 d_ff=512 layers=2 history=128 steps=8

.wg 0
.rf x p3+2048 32x32        ; 4 KiB starting mid-partition
    END
