# exp6-exp8 again, with loaders that are what their names say (in exp6-8
# cargo, judging freshness by mtime, handed back an earlier variant's
# binary for some: see README.md).  One 2x2x2 boot:
# Part 1: hackbench 4 groups under EEVDF, "new" (13a77e0's source),
#   "vnow" (vnow.diff: wake_clock() returns vtime_now) and "vlag"
#   (vlag.diff: a sleeper keeps its lag against its CPU's clock, as
#   EEVDF's place_entity() keeps it), 8 rounds rotated.
# Part 2: sysbench threads 1 and 8 (1000 events: 1M sched_yield()) under
#   EEVDF, new and "vynoop" (vynoop.diff: ops.yield returns at once,
#   keeping the slice), 6 rounds rotated.
# Part 3: the root sleeper (../root-sleeper/exp.sh's trials: a sleeper of
#   the root, 100 ms period, 6 s, beside 8+8 spinners at cgroup weights
#   1:10,000, then 100:100) under new and vnow, alternated, 3 rounds.
# Loaders: build/wd/mkvar.py NAME DIFF (not in git; it touches the copied
# source so that cargo rebuilds).
#   python3 -m idlesteal boot --variant scx --preset 2x2x2 --no-build --tools sysbench \
#     --file build/wd/scx_idlesteal.new:/usr/bin/scx_idlesteal.new \
#     --file build/wd/scx_idlesteal.vnow:/usr/bin/scx_idlesteal.vnow \
#     --file build/wd/scx_idlesteal.vlag:/usr/bin/scx_idlesteal.vlag \
#     --file build/wd/scx_idlesteal.vynoop:/usr/bin/scx_idlesteal.vynoop \
#     --script results/scx/wake-clock/exp10.sh
# Lines: "RES SCHED WORKLOAD ROUND SECONDS", "root-sleeper SCHED TRIAL ROUND RESULT {...}".
hb() { hackbench -g 4 -l 100 > /dev/null; hackbench -g 4 -l 100 | awk '/^Time:/ {print $2}'; }
sb() { sysbench threads --threads=$1 --events=1000 --time=0 run | awk '/total time:/ {sub("s","",$3); print $3}'; }
run() {   # SCHED COMMAND...
  s=$1; shift
  if [ $s != eevdf ]; then scx_start /tmp/$s.log scx_idlesteal.$s > /dev/null || fail "$s did not load"; fi
  "$@"
  if [ $s != eevdf ]; then scx_stop > /dev/null || fail "$s did not unload"; fi
}
hbone() { echo "RES $1 hackbench-4 $2 $(hb)"; }
sbone() { echo "RES $1-1 sysbench $2 $(sb 1)"; echo "RES $1-8 sysbench $2 $(sb 8)"; }
set -- eevdf new vnow vlag
for r in 1 2 3 4 5 6 7 8; do
  for s in "$@"; do run $s hbone $s $r; done
  first=$1; shift; set -- "$@" $first
done
set -- eevdf new vynoop
for r in 1 2 3 4 5 6; do
  for s in "$@"; do run $s sbone $s $r; done
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
for r in 1 2 3; do
  if [ $r = 2 ]; then order="vnow new"; else order="new vnow"; fi
  for s in $order; do run $s rs $s $r; done
done
echo "state $(cat /sys/kernel/sched_ext/state)"
