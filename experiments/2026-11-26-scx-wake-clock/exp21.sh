# exp20's vcap took back most of hackbench's loss (0.70x cur's time) and
# kept the root sleeper's median wait below a millisecond at 1:10,000, with
# fewer wakeups than cur (34, 17, 38 of 60; cur 48, 45, 42).  More trials
# of that, and "vcapq" (vcapq.diff: vcap with a quarter slice, 5 ms, as
# the most vtime_now moves at one task's start) against both: does the
# tighter cap keep the sleeper closer to cur without giving hackbench back?
# hackbench 4 groups, 6 rounds rotated (EEVDF, vcap, vcapq); the root
# sleeper at 1:10,000 and 100:100, vcap, vcapq, cur alternated, 4 each.
# One 2x2x2 boot.
#   python3 results/scx/wake-clock/mkvar.py vcapq results/scx/wake-clock/vcapq.diff
#   python3 -m idlesteal boot --variant scx --preset 2x2x2 --no-build --tools perf \
#     --file build/wd/scx_idlesteal.cur:/usr/bin/scx_idlesteal.cur \
#     --file build/wd/scx_idlesteal.vcap:/usr/bin/scx_idlesteal.vcap \
#     --file build/wd/scx_idlesteal.vcapq:/usr/bin/scx_idlesteal.vcapq \
#     --file results/scx/wake-clock/lib.sh:/usr/local/lib/wake-clock.sh \
#     --script results/scx/wake-clock/exp21.sh --timeout 1500
. /usr/local/lib/wake-clock.sh
run vcapq sleep 2
rotate 6 hbone eevdf vcap vcapq
for r in 1 2 3 4; do run vcap rs vcap $r; run vcapq rs vcapq $r; run cur rs cur $r; done
echo "state $(cat /sys/kernel/sched_ext/state)"
