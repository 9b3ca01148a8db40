# What the sync-wakeup fix (sched_ext review, item 1.1: a sync wakee goes ahead of the
# waker's CPU's queue only when nothing waits there) costs or gains on
# ping-pong work with waiters: EEVDF, the loader ("cur", eea10e4's
# source) and "nosync" (nosync.diff: the check taken out, every idle-
# looking sync wakeup inserted into SCX_DSQ_LOCAL as before 1.1; can starve
# the CPU's queue, the reason for the fix).  hackbench -T -p -g 4 (pipes,
# threads; 160 tasks) and 8 pairs of `perf bench sched pipe` at once
# (16 tasks on 8 CPUs), 8 rounds rotated, one 2x2x2 boot.
#   python3 results/scx/wake-clock/mkvar.py cur -
#   python3 results/scx/wake-clock/mkvar.py nosync results/scx/sync-wakeup/nosync.diff
#   python3 -m idlesteal boot --variant scx --preset 2x2x2 --no-build --tools perf \
#     --file build/wd/scx_idlesteal.cur:/usr/bin/scx_idlesteal.cur \
#     --file build/wd/scx_idlesteal.nosync:/usr/bin/scx_idlesteal.nosync \
#     --file results/scx/wake-clock/lib.sh:/usr/local/lib/wake-clock.sh \
#     --script results/scx/sync-wakeup/exp27.sh --timeout 1500
# Lines: "RES SCHED-hbtp hackbench-T-p-4 ROUND SECONDS", "RES SCHED-pipe
# pipe-8 ROUND USECS_PER_OP" (mean of the 8 pairs), "LOG SCHED stats ...".
. /usr/local/lib/wake-clock.sh
one() {
  echo "RES $1-hbtp hackbench-T-p-4 $2 $(hackbench -T -p -g 4 -l 100 | awk '/^Time:/ {print $2}')"
  i=0; pids=
  while [ $i -lt 8 ]; do perf bench sched pipe -l 5000 > /tmp/pp.$i 2>&1 & pids="$pids $!"; i=$((i + 1)); done
  for j in $pids; do wait $j; done   # not a bare wait: the loader is a job of this shell too
  echo "RES $1-pipe pipe-8 $2 $(cat /tmp/pp.* | awk '/usecs\/op/ {s += $1; n++} END {if (n == 8) printf "%.3f", s / n; else print "pairs-" n}')"
}
rotate 8 one eevdf cur nosync
echo "state $(cat /sys/kernel/sched_ext/state)"
