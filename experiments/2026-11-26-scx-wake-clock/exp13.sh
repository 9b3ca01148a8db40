# Is it the new tasks?  hackbench forks all its tasks at the start of each
# run, and ops.enable() starts a new task at its CPU's clock (wake_clock(),
# the earliest of what waits there): ahead of everything queued.  vnow.diff
# changes that too.  "venable" (venable.diff): only ops.enable() starts a
# task at vtime_now; wakeups keep the per-CPU clock.  Against "cur" (the
# work tree of the yield change, ../yield-cost/ exp12's yfast), vnow and
# EEVDF: hackbench 4 groups, 8 rounds rotated, one 2x2x2 boot.
# Loaders: mkvar.py NAME DIFF (build/wd/, not in git).
#   python3 -m idlesteal boot --variant scx --preset 2x2x2 --no-build \
#     --file build/wd/scx_idlesteal.cur:/usr/bin/scx_idlesteal.cur \
#     --file build/wd/scx_idlesteal.vnow:/usr/bin/scx_idlesteal.vnow \
#     --file build/wd/scx_idlesteal.venable:/usr/bin/scx_idlesteal.venable \
#     --script results/scx/wake-clock/exp13.sh --timeout 1200
# Lines: "RES SCHED hackbench-4 ROUND SECONDS".
hb() { hackbench -g 4 -l 100 > /dev/null; hackbench -g 4 -l 100 | awk '/^Time:/ {print $2}'; }
run() {   # SCHED COMMAND...
  s=$1; shift
  if [ $s != eevdf ]; then scx_start /tmp/$s.log scx_idlesteal.$s > /dev/null || fail "$s did not load"; fi
  "$@"
  if [ $s != eevdf ]; then scx_stop > /dev/null || fail "$s did not unload"; fi
}
hbone() { echo "RES $1 hackbench-4 $2 $(hb)"; }
set -- eevdf cur vnow venable
for r in 1 2 3 4 5 6 7 8; do
  for s in "$@"; do run $s hbone $s $r; done
  first=$1; shift; set -- "$@" $first
done
echo "state $(cat /sys/kernel/sched_ext/state)"
