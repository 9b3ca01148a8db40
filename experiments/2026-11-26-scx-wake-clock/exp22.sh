# The clock as committed ("clock": the work tree after 689f325, clock.diff):
# vcapq (vtime_now moves by at most a quarter slice at a task's start, no
# per-CPU clock) and vtime_now also moved at a slice end by the task kept
# running (ops.dispatch()), which is not started again.  Against "cur"
# (the loader of 823db30 = 689f325) and EEVDF: hackbench 4 groups, 6
# rounds rotated; wakelat 2, 4 rounds; the root sleeper at 1:10,000 and
# 100:100, clock and cur alternated, 3 each; and "newcomers": 8 spinners
# that kept their CPUs for 6 s, then 8 more: the newcomers' shares over
# their first 2 s (fair 0.5 each).  A clock left where it was while the
# CPUs kept their tasks would place the newcomers behind by all the
# first 8 ran, and they would have their CPUs to themselves (1.0);
# vcapq (exp21) lacks the slice-end move.  2 rounds each.  One 2x2x2 boot.
#   python3 results/scx/wake-clock/mkvar.py clock results/scx/wake-clock/clock.diff
#   python3 -m idlesteal boot --variant scx --preset 2x2x2 --no-build --tools perf \
#     --file build/wd/scx_idlesteal.cur:/usr/bin/scx_idlesteal.cur \
#     --file build/wd/scx_idlesteal.clock:/usr/bin/scx_idlesteal.clock \
#     --file build/wd/scx_idlesteal.vcapq:/usr/bin/scx_idlesteal.vcapq \
#     --file results/scx/wake-clock/lib.sh:/usr/local/lib/wake-clock.sh \
#     --script results/scx/wake-clock/exp22.sh --timeout 1500
. /usr/local/lib/wake-clock.sh
run clock sleep 2
newcomers() {   # SCHED ROUND
  hogs -n 8 -w 1 -d 12 > /dev/null & a=$!
  sleep 6
  hogs -n 8 -w 1 -d 2 | grep RESULT | sed "s/^/newcomers $1 $2 /"
  wait $a
}
rotate 2 newcomers eevdf cur clock vcapq
rotate 6 hbone eevdf cur clock
rotate 4 wlone eevdf cur clock
for r in 1 2 3; do run clock rs clock $r; run cur rs cur $r; done
echo "state $(cat /sys/kernel/sched_ext/state)"
