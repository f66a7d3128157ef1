; cycle_cap.asm - stops at the fuzzer's cycle cap (20,000), not at the program's end
.machine sms=16 wgs_per_sm=4 rf_kib=64 vl=16 mma_arrays=1 sfu=8 sh_kib=0 dma=2x1 hbm=8 noc=512 multicast=1 reduce=0
.problem d1 d_model=32 heads=1 d_ff=64 layers=1 history=32 steps=2
.wg 0
    WAITT 30000
    END
