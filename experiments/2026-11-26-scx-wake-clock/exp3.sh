# Which part of the wake placement (fb2b401, 4b50be5) costs hackbench 4
# groups ~1.45x: scx_idlesteal as now ("new"), before it ("old", 3d5842d),
# and three loaders built from today's source with one part taken out
# (the diffs: vnow.diff, vnodebt.diff, vnoidle.diff):
#   vnow     wake_clock() returns vtime_now (no per-CPU clock)
#   vnodebt  wake_vtime() without the debt bound
#   vnoidle  ops.select_cpu()'s direct insert keeps the task's vtime
# One 2x2x2 boot, 8 rounds, order rotated by one per round, no tracing.
#   python3 -m idlesteal boot --variant scx --preset 2x2x2 --no-build \
#     --file build/scx-scx/build/bin/scx_idlesteal:/usr/bin/scx_idlesteal \
#     --file build/issue21-wd/scx_idlesteal.old:/usr/bin/scx_idlesteal.old \
#     --file build/issue21-wd/scx_idlesteal.vnow:/usr/bin/scx_idlesteal.vnow \
#     --file build/issue21-wd/scx_idlesteal.vnodebt:/usr/bin/scx_idlesteal.vnodebt \
#     --file build/issue21-wd/scx_idlesteal.vnoidle:/usr/bin/scx_idlesteal.vnoidle \
#     --script results/scx/wake-clock/exp3.sh
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
set -- old new vnow vnodebt vnoidle
for r in 1 2 3 4 5 6 7 8; do
  for s in "$@"; do one $s $r; done
  first=$1; shift; set -- "$@" $first
done
echo "state $(cat /sys/kernel/sched_ext/state)"
