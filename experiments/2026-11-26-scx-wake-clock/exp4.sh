# exp3.sh found the cost in the per-CPU clock of wake_clock() (vnow: the
# clock is vtime_now, as fast as old).  Cost per wakeup, or the order it
# gives?  Two loaders from today's source (vcost.diff, vgate.diff):
#   vcost  wake_clock() computed in full, vtime_now returned (the cost, old order)
#   vgate  the CPU's clock only where it is more than 8 slices behind
#          vtime_now (the root-sleeper case), else vtime_now
# One 2x2x2 boot, 8 rounds, order rotated, no tracing.
#   python3 -m idlesteal boot --variant scx --preset 2x2x2 --no-build \
#     --file build/scx-scx/build/bin/scx_idlesteal:/usr/bin/scx_idlesteal \
#     --file build/issue21-wd/scx_idlesteal.old:/usr/bin/scx_idlesteal.old \
#     --file build/issue21-wd/scx_idlesteal.vcost:/usr/bin/scx_idlesteal.vcost \
#     --file build/issue21-wd/scx_idlesteal.vgate:/usr/bin/scx_idlesteal.vgate \
#     --script results/scx/wake-clock/exp4.sh
# Lines: "RES SCHED hackbench-4 ROUND SECONDS".
one() {   # one SCHED ROUND
  case $1 in
  new) b=scx_idlesteal ;;
  *) b=scx_idlesteal.$1 ;;
  esac
  scx_start /tmp/$1.log $b > /dev/null || fail "$1 did not load"
  hackbench -g 4 -l 100 > /dev/null                      # warm-up
  t=$(hackbench -g 4 -l 100 | awk '/^Time:/ {print $2}')
  echo "RES $1 hackbench-4 $2 $t"
  scx_stop > /dev/null || fail "$1 did not unload"
}
set -- old new vcost vgate
for r in 1 2 3 4 5 6 7 8; do
  for s in "$@"; do one $s $r; done
  first=$1; shift; set -- "$@" $first
done
echo "state $(cat /sys/kernel/sched_ext/state)"
