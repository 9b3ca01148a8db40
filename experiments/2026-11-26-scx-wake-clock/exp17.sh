# exp16's reading put to a variant: "vwait" (vwait.diff): when the head of
# the CPU's queue has waited a slice (p->scx.runnable_at, jiffies), a
# waking task is placed behind it (the clock is the head's vtime plus a
# slice), so waiting tasks are not overtaken for ever.  Against "cur"
# (the loader of 823db30) and EEVDF: hackbench 4 groups with the context
# switches and the loader's counters (exp16's), 6 rounds rotated; wakelat
# 2 (the suite's cell, exp15's), 4 rounds rotated; the root sleeper at
# 1:10,000 and 100:100 (exp14's part 2), vwait and cur alternated, 2
# each.  One 2x2x2 boot.
#   python3 results/scx/wake-clock/mkvar.py cur -
#   python3 results/scx/wake-clock/mkvar.py vwait results/scx/wake-clock/vwait.diff
#   python3 -m idlesteal boot --variant scx --preset 2x2x2 --no-build --tools perf \
#     --file build/wd/scx_idlesteal.cur:/usr/bin/scx_idlesteal.cur \
#     --file build/wd/scx_idlesteal.vwait:/usr/bin/scx_idlesteal.vwait \
#     --script results/scx/wake-clock/exp17.sh --timeout 1500
# Lines: "RES SCHED-hb hackbench-4 ROUND SECONDS", "RES SCHED-wl wakelat ROUND
# REQ/S", "CNT ...", "LOG ..." (exp16's), "root-sleeper SCHED TRIAL ROUND RESULT {...}".
hb() {
  perf stat -a -x, -e context-switches,cpu-migrations -o /tmp/ps.txt \
    hackbench -g 4 -l 100 | awk '/^Time:/ {print $2}'
}
wl() { wakelat -m 2 -w 4 -d 5 | sed -n 's/^RESULT .*"rps": *\([0-9.]*\).*/\1/p'; }
run() {   # SCHED COMMAND...
  s=$1; shift
  if [ $s != eevdf ]; then scx_start /tmp/$s.log scx_idlesteal.$s > /dev/null || fail "$s did not load"; fi
  "$@"
  if [ $s != eevdf ]; then
    scx_stop > /dev/null || fail "$s did not unload"
    echo "LOG $s $(grep "^stats" /tmp/$s.log | tail -n 1)"
  fi
}
hbone() {
  t=$(hb)
  cs=$(awk -F, '$3 == "context-switches" {print $1}' /tmp/ps.txt)
  mig=$(awk -F, '$3 == "cpu-migrations" {print $1}' /tmp/ps.txt)
  echo "RES $1-hb hackbench-4 $2 $t"
  echo "CNT $1 $2 cs $cs mig $mig"
}
wlone() { echo "RES $1-wl wakelat $2 $(wl)"; }
set -- eevdf cur vwait
for r in 1 2 3 4 5 6; do
  for s in "$@"; do run $s hbone $s $r; done
  first=$1; shift; set -- "$@" $first
done
set -- eevdf cur vwait
for r in 1 2 3 4; do
  for s in "$@"; do run $s wlone $s $r; done
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
run vwait rs vwait 1
run cur rs cur 1
run vwait rs vwait 2
run cur rs cur 2
echo "state $(cat /sys/kernel/sched_ext/state)"
