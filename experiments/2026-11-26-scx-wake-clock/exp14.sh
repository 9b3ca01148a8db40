# The per-CPU clock for long sleepers only.  exp13: not the new tasks
# (venable: no change).  "vsleep" (vsleep.diff): a task that slept less
# than a slice (20 ms) is placed against vtime_now, as vnow places every
# task; one that slept longer against its CPU's clock (wake_clock()), as
# now.  The root sleeper (100 ms period) is one of the latter, hackbench's
# tasks mostly the former.  Part 1: hackbench 4 groups under EEVDF, "cur"
# (exp13's), vnow and vsleep, 8 rounds rotated.  Part 2: the root sleeper
# at 1:10,000 and 100:100 (as exp10's part 3) under vsleep three times and
# cur twice, alternated.  One 2x2x2 boot.
#   python3 -m idlesteal boot --variant scx --preset 2x2x2 --no-build \
#     --file build/wd/scx_idlesteal.cur:/usr/bin/scx_idlesteal.cur \
#     --file build/wd/scx_idlesteal.vnow:/usr/bin/scx_idlesteal.vnow \
#     --file build/wd/scx_idlesteal.vsleep:/usr/bin/scx_idlesteal.vsleep \
#     --script results/scx/wake-clock/exp14.sh --timeout 1500
# Lines: "RES SCHED hackbench-4 ROUND SECONDS", "root-sleeper SCHED TRIAL ROUND RESULT {...}".
hb() { hackbench -g 4 -l 100 > /dev/null; hackbench -g 4 -l 100 | awk '/^Time:/ {print $2}'; }
run() {   # SCHED COMMAND...
  s=$1; shift
  if [ $s != eevdf ]; then scx_start /tmp/$s.log scx_idlesteal.$s > /dev/null || fail "$s did not load"; fi
  "$@"
  if [ $s != eevdf ]; then scx_stop > /dev/null || fail "$s did not unload"; fi
}
hbone() { echo "RES $1 hackbench-4 $2 $(hb)"; }
set -- eevdf cur vnow vsleep
for r in 1 2 3 4 5 6 7 8; do
  for s in "$@"; do run $s hbone $s $r; done
  first=$1; shift; set -- "$@" $first
done
CG=/sys/fs/cgroup
mount -t cgroup2 none $CG 2>/dev/null
echo "+cpu" > $CG/cgroup.subtree_control
mkdir -p $CG/light $CG/heavy
trial() {   # SCHED NAME ROUND LIGHT_WEIGHT HEAVY_WEIGHT
  echo $4 > $CG/light/cpu.weight; echo $5 > $CG/heavy/cpu.weight
  sh -c "echo \$\$ > $CG/light/cgroup.procs; exec hogs -n 8 -w 1 -d 9" > /dev/null & a=$!
  sh -c "echo \$\$ > $CG/heavy/cgroup.procs; exec hogs -n 8 -w 1 -d 9" > /dev/null & b=$!
  sleep 1
  sleeplat -n 0 -p 100000 -w 1 -d 6 | grep RESULT | sed "s/^/root-sleeper $1 $2 $3 /"
  wait $a $b
}
rs() { trial $1 both-1-10000 $2 1 10000; trial $1 both-100-100 $2 100 100; }
run vsleep rs vsleep 1
run cur rs cur 1
run vsleep rs vsleep 2
run cur rs cur 2
run vsleep rs vsleep 3
echo "state $(cat /sys/kernel/sched_ext/state)"
