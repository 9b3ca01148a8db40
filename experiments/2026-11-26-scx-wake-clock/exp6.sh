# A sleeper keeps its lag (vlag.diff): at sleep (ops.stopping(), not
# runnable) the task's lag against its CPU's clock (wake_clock()) is kept;
# at its wakeup it is placed at the target CPU's clock less that lag,
# bounded as before (one slice of credit, two charged slices of debt), the
# way EEVDF keeps a sleeper's lag (place_entity()).  Against "new"
# (the source as of 13a77e0), "vnow" (vnow.diff: wake_clock() returns
# vtime_now) and EEVDF, in one 2x2x2 boot, 8 rounds rotated.
# Part 2: the root sleeper at cgroup weights 1:10,000 and 100:100
# (../root-sleeper/exp.sh's trials), which the per-CPU clock is for.
# Loaders: build/wd/mkvar.py NAME DIFF (not in git) builds each.
#   python3 -m idlesteal boot --variant scx --preset 2x2x2 --no-build \
#     --file build/wd/scx_idlesteal.new:/usr/bin/scx_idlesteal.new \
#     --file build/wd/scx_idlesteal.vnow:/usr/bin/scx_idlesteal.vnow \
#     --file build/wd/scx_idlesteal.vlag:/usr/bin/scx_idlesteal.vlag \
#     --script results/scx/wake-clock/exp6.sh
# Lines: "RES SCHED hackbench-4 ROUND SECONDS", "root-sleeper SCHED TRIAL RESULT {...}".
hb() { hackbench -g 4 -l 100 > /dev/null; hackbench -g 4 -l 100 | awk '/^Time:/ {print $2}'; }
one() {   # one SCHED ROUND
  if [ $1 = eevdf ]; then
    echo "RES eevdf hackbench-4 $2 $(hb)"
    return
  fi
  scx_start /tmp/$1.log scx_idlesteal.$1 > /dev/null || fail "$1 did not load"
  echo "RES $1 hackbench-4 $2 $(hb)"
  scx_stop > /dev/null || fail "$1 did not unload"
}
set -- eevdf new vnow vlag
for r in 1 2 3 4 5 6 7 8; do
  for s in "$@"; do one $s $r; done
  first=$1; shift; set -- "$@" $first
done
CG=/sys/fs/cgroup
mount -t cgroup2 none $CG 2>/dev/null
echo "+cpu" > $CG/cgroup.subtree_control
mkdir -p $CG/light $CG/heavy
trial() {   # SCHED NAME LIGHT_WEIGHT HEAVY_WEIGHT LIGHT_SPINNERS
  echo $3 > $CG/light/cpu.weight; echo $4 > $CG/heavy/cpu.weight
  sh -c "echo \$\$ > $CG/light/cgroup.procs; exec hogs -n $5 -w 1 -d 9" > /dev/null & a=$!
  sh -c "echo \$\$ > $CG/heavy/cgroup.procs; exec hogs -n 8 -w 1 -d 9" > /dev/null & b=$!
  sleep 1
  sleeplat -n 0 -p 100000 -w 1 -d 6 | grep RESULT | sed "s/^/root-sleeper $1 $2 /"
  wait $a $b
}
for s in vnow vlag new; do
  scx_start /tmp/rs-$s.log scx_idlesteal.$s > /dev/null || fail "$s did not load"
  trial $s both-1-10000 1 10000 8
  trial $s both-100-100 100 100 8
  scx_stop > /dev/null || fail "$s did not unload"
done
echo "state $(cat /sys/kernel/sched_ext/state)"
