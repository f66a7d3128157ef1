; numerics fail, fast: no WG writes the outputs of the largest D1
.machine sms=16 wgs_per_sm=4 rf_kib=64 vl=16 mma_arrays=1 sfu=8 sh_kib=0 dma=2x1 hbm=8 noc=512 multicast=1 reduce=0
.problem d1 d_model=1024 heads=32 d_ff=4096 layers=8 history=1024 steps=64
