# exp17's open question: does vwait (vwait.diff) starve the root sleeper at
# 1:10,000 (9 and 35 wakeups of 60 there, cur 47 and 28)?  The root sleeper
# part alone (exp14's part 2, 1:10,000 only), vwait and cur alternated, 5
# trials each.  One 2x2x2 boot.
#   python3 results/scx/wake-clock/mkvar.py cur -
#   python3 results/scx/wake-clock/mkvar.py vwait results/scx/wake-clock/vwait.diff
#   python3 -m idlesteal boot --variant scx --preset 2x2x2 --no-build \
#     --file build/wd/scx_idlesteal.cur:/usr/bin/scx_idlesteal.cur \
#     --file build/wd/scx_idlesteal.vwait:/usr/bin/scx_idlesteal.vwait \
#     --script results/scx/wake-clock/exp18.sh --timeout 1500
# Lines: "root-sleeper SCHED TRIAL ROUND RESULT {...}".
run() {   # SCHED COMMAND...
  s=$1; shift
  scx_start /tmp/$s.log scx_idlesteal.$s > /dev/null || fail "$s did not load"
  "$@"
  scx_stop > /dev/null || fail "$s did not unload"
}
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
for r in 1 2 3 4 5; do
  run vwait trial vwait both-1-10000 $r 1 10000
  run cur trial cur both-1-10000 $r 1 10000
done
echo "state $(cat /sys/kernel/sched_ext/state)"
