# exp3/exp4: the cost is the order the per-CPU clock gives (the earliest
# of the CPU's head and running task: every waking task goes ahead of the
# whole queue), not its price.  vmax (vmax.diff): the clock is the LATER of
# the two, still never past vtime_now.  Part 1: hackbench 4 groups, old,
# new, vmax, 8 rounds rotated.  Part 2: the root sleeper at cgroup weights
# 1:10,000 (../root-sleeper/exp.sh's trial both-1-10000), which the
# per-CPU clock was made for, under vnow (no per-CPU clock) and vmax.
#   python3 -m idlesteal boot --variant scx --preset 2x2x2 --no-build \
#     --file build/scx-scx/build/bin/scx_idlesteal:/usr/bin/scx_idlesteal \
#     --file build/issue21-wd/scx_idlesteal.old:/usr/bin/scx_idlesteal.old \
#     --file build/issue21-wd/scx_idlesteal.vnow:/usr/bin/scx_idlesteal.vnow \
#     --file build/issue21-wd/scx_idlesteal.vmax:/usr/bin/scx_idlesteal.vmax \
#     --script results/scx/wake-clock/exp5.sh
# Lines: "RES SCHED hackbench-4 ROUND SECONDS", "root-sleeper SCHED TRIAL RESULT {...}".
bin() { case $1 in new) echo scx_idlesteal ;; *) echo scx_idlesteal.$1 ;; esac; }
one() {   # one SCHED ROUND
  scx_start /tmp/$1.log $(bin $1) > /dev/null || fail "$1 did not load"
  hackbench -g 4 -l 100 > /dev/null                      # warm-up
  t=$(hackbench -g 4 -l 100 | awk '/^Time:/ {print $2}')
  echo "RES $1 hackbench-4 $2 $t"
  scx_stop > /dev/null || fail "$1 did not unload"
}
set -- old new vmax
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
for s in vnow vmax new; do
  scx_start /tmp/rs-$s.log $(bin $s) > /dev/null || fail "$s did not load"
  trial $s both-1-10000 1 10000 8
  trial $s both-100-100 100 100 8
  scx_stop > /dev/null || fail "$s did not unload"
done
echo "state $(cat /sys/kernel/sched_ext/state)"
