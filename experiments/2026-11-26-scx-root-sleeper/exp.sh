# A sleeper of the root cgroup beside CPU-bound tasks of two cgroups, under
# EEVDF and then scx_idlesteal, in one 2x2x2 boot (docs/scx.md,
# "Starvation").  Run (the loader built by `python3 -m idlesteal scx`):
#   python3 -m idlesteal boot --variant scx --preset 2x2x2 --no-build \
#     --file build/scx-scx/build/bin/scx_idlesteal:/usr/bin/scx_idlesteal \
#     --script results/scx/root-sleeper/exp.sh
# Each trial: cgroups light and heavy at the given cpu.weight, 8 spinners
# in heavy (and N in light), and sleeplat in the root (no spinners of its
# own, 100 ms period, 6 s): its wait on the run queue at each wakeup.
CG=/sys/fs/cgroup
mount -t cgroup2 none $CG 2>/dev/null
echo "+cpu" > $CG/cgroup.subtree_control
mkdir -p $CG/light $CG/heavy
# trial SCHED NAME LIGHT_WEIGHT HEAVY_WEIGHT LIGHT_SPINNERS
trial() {
  echo $3 > $CG/light/cpu.weight; echo $4 > $CG/heavy/cpu.weight
  a=
  if [ $5 -gt 0 ]; then sh -c "echo \$\$ > $CG/light/cgroup.procs; exec hogs -n $5 -w 1 -d 9" > /dev/null & a=$!; fi
  sh -c "echo \$\$ > $CG/heavy/cgroup.procs; exec hogs -n 8 -w 1 -d 9" > /dev/null &
  b=$!
  sleep 1
  sleeplat -n 0 -p 100000 -w 1 -d 6 | grep RESULT | sed "s/^/root-sleeper $1 $2 /"
  # not a bare wait: the loader is a child of this shell too
  wait $a $b
}
for sched in eevdf scx_idlesteal; do
  [ $sched = scx_idlesteal ] && scx_start /tmp/x.log scx_idlesteal
  trial $sched heavyonly-10000 1 10000 0
  trial $sched both-100-100 100 100 8
  trial $sched both-1-10000 1 10000 8
  trial $sched heavyonly-100 1 100 0
done
echo "state $(cat /sys/kernel/sched_ext/state)"
scx_stop
grep final /tmp/x.log
