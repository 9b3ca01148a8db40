# EEVDF's placement: "vavg" (the work tree after 689f325, vavg.diff): the
# clock of a CPU is the weighted average vtime of its queue and its running
# task (per-CPU sums kept by enqueue, running, quiescent), not the earliest
# of them, and a task that slept keeps its lag against that clock (taken
# when it sleeps, the task itself counted, EEVDF's vlag).  Against "cur"
# (the loader of 823db30, the same BPF as 689f325) and EEVDF: hackbench 4
# groups, 6 rounds rotated; wakelat 2, 4 rounds; the root sleeper at
# 1:10,000 and 100:100, vavg and cur alternated, 4 each.  One 2x2x2 boot.
#   python3 results/scx/wake-clock/mkvar.py vavg results/scx/wake-clock/vavg.diff
#   python3 -m idlesteal boot --variant scx --preset 2x2x2 --no-build --tools perf \
#     --file build/wd/scx_idlesteal.cur:/usr/bin/scx_idlesteal.cur \
#     --file build/wd/scx_idlesteal.vavg:/usr/bin/scx_idlesteal.vavg \
#     --file results/scx/wake-clock/lib.sh:/usr/local/lib/wake-clock.sh \
#     --script results/scx/wake-clock/exp19.sh --timeout 1500
. /usr/local/lib/wake-clock.sh
run vavg sleep 2
rotate 6 hbone eevdf cur vavg
rotate 4 wlone eevdf cur vavg
for r in 1 2 3 4; do run vavg rs vavg $r; run cur rs cur $r; done
echo "state $(cat /sys/kernel/sched_ext/state)"
