# exp19's vavg starved the root sleeper at 1:10,000 (9-21 wakeups of 60 in
# three of four trials): the average ran off with the light cgroup's
# tasks, each a slice's run ahead by 16 s.  Two candidates against "cur"
# (the loader of 823db30) and EEVDF:
#   vavg2 (vavg2.diff, against 689f325): vavg, a queued task counted in
#     the average at most two slices past vtime_now;
#   vcap (vcap.diff, against 689f325's scx_idlesteal.bpf.c): no per-CPU
#     clock (vnow), and vtime_now moves by at most a slice at each task
#     that starts running, so that no one task of weight 1 carries it off.
# hackbench 4 groups, 6 rounds rotated; wakelat 2, 4 rounds; the root
# sleeper at 1:10,000 and 100:100, 3 each, alternated.  One 2x2x2 boot.
#   python3 results/scx/wake-clock/mkvar.py vavg2 results/scx/wake-clock/vavg2.diff
#   python3 results/scx/wake-clock/mkvar.py vcap results/scx/wake-clock/vcap.diff
#   python3 -m idlesteal boot --variant scx --preset 2x2x2 --no-build --tools perf \
#     --file build/wd/scx_idlesteal.cur:/usr/bin/scx_idlesteal.cur \
#     --file build/wd/scx_idlesteal.vavg2:/usr/bin/scx_idlesteal.vavg2 \
#     --file build/wd/scx_idlesteal.vcap:/usr/bin/scx_idlesteal.vcap \
#     --file results/scx/wake-clock/lib.sh:/usr/local/lib/wake-clock.sh \
#     --script results/scx/wake-clock/exp20.sh --timeout 1500
. /usr/local/lib/wake-clock.sh
run vavg2 sleep 2
run vcap sleep 2
rotate 6 hbone eevdf cur vavg2 vcap
rotate 4 wlone eevdf cur vavg2 vcap
for r in 1 2 3; do run vavg2 rs vavg2 $r; run vcap rs vcap $r; run cur rs cur $r; done
echo "state $(cat /sys/kernel/sched_ext/state)"
