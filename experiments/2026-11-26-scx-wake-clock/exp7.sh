# exp6 found "new" (13a77e0's source) and "vnow" equal on hackbench 4
# groups, 1.18x EEVDF, where exp3-exp5 (41694e2's source) had new at
# ~1.45x vnow.  A second boot to confirm it: hackbench 4 groups, EEVDF,
# new, vnow, 8 rounds rotated.  Part 2 (for ../yield-cost/): sysbench
# threads 1 and 8 (1000 events: 1M sched_yield()) under EEVDF, new, and
# "vynoop" (vynoop.diff: ops.yield returns at once, keeping the slice:
# the floor of sched_ext's yield path with this scheduler), 6 rounds.
#   python3 -m idlesteal boot --variant scx --preset 2x2x2 --no-build \
#     --file build/wd/scx_idlesteal.new:/usr/bin/scx_idlesteal.new \
#     --file build/wd/scx_idlesteal.vnow:/usr/bin/scx_idlesteal.vnow \
#     --file build/wd/scx_idlesteal.vynoop:/usr/bin/scx_idlesteal.vynoop \
#     --script results/scx/wake-clock/exp7.sh
# Part 2 did not run: the boot lacked --tools sysbench ("sysbench: not
# found" in output7.txt); exp8.sh runs it.
# Lines: "RES SCHED WORKLOAD ROUND SECONDS".
hb() { hackbench -g 4 -l 100 > /dev/null; hackbench -g 4 -l 100 | awk '/^Time:/ {print $2}'; }
sb() { sysbench threads --threads=$1 --events=1000 --time=0 run | awk '/total time:/ {sub("s","",$3); print $3}'; }
run() {   # SCHED ROUND COMMAND...
  s=$1 r=$2; shift 2
  if [ $s != eevdf ]; then scx_start /tmp/$s.log scx_idlesteal.$s > /dev/null || fail "$s did not load"; fi
  "$@"
  if [ $s != eevdf ]; then scx_stop > /dev/null || fail "$s did not unload"; fi
}
hbone() { echo "RES $1 hackbench-4 $2 $(hb)"; }
sbone() { echo "RES $1-1 sysbench $2 $(sb 1)"; echo "RES $1-8 sysbench $2 $(sb 8)"; }
set -- eevdf new vnow
for r in 1 2 3 4 5 6 7 8; do
  for s in "$@"; do run $s $r hbone $s $r; done
  first=$1; shift; set -- "$@" $first
done
set -- eevdf new vynoop
for r in 1 2 3 4 5 6; do
  for s in "$@"; do run $s $r sbone $s $r; done
  first=$1; shift; set -- "$@" $first
done
echo "state $(cat /sys/kernel/sched_ext/state)"
