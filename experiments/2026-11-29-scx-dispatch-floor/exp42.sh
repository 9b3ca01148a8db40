# exp42: vloc2 (vloc2.diff: a sync wakee for which no CPU is idle goes
# straight into its waker CPU's local DSQ from ops.select_cpu() when
# nothing waits there, its local DSQ and its queue empty; the case the
# waker's CPU is the wakee's previous one included, which vloc of
# ../failed-search/ left out: most of a pipe pair's wakeups) against the
# loader as it is ("cur"), EEVDF and the kernel's scx_simple; 8 pipe pairs
# and hackbench 4 groups, 6 rounds rotated, one 2x2x2 boot.
#   python3 results/scx/wake-clock/mkvar.py vloc2 results/scx/dispatch-floor/vloc2.diff
#   python3 -m idlesteal boot --variant scx --preset 2x2x2 --no-build --tools perf \
#     --file build/scx-scx/build/bin/scx_idlesteal:/usr/bin/scx_idlesteal.cur \
#     --file build/wd/scx_idlesteal.vloc2:/usr/bin/scx_idlesteal.vloc2 \
#     --file build/scx-scx/build/bin/scx_simple:/usr/bin/scx_idlesteal.simple \
#     --file results/scx/wake-clock/lib.sh:/usr/local/lib/wake-clock.sh \
#     --script results/scx/dispatch-floor/exp42.sh --timeout 1500
# Lines: "RES SCHED-pipe pipe-8 ROUND USECS_PER_OP", "PCNT SCHED ROUND cs N mig N",
# "RES SCHED-hb hackbench-4 ROUND SECONDS", "CNT ...", "LOG SCHED stats ...".
# (pipe8one moved to ../wake-clock/lib.sh after the run; the same commands.)
. /usr/local/lib/wake-clock.sh
one() {
  pipe8one $1 $2
  hbone $1 $2
}
rotate 6 one eevdf cur vloc2 simple
echo "state $(cat /sys/kernel/sched_ext/state)"
