# Shared by the wake-clock experiments from exp19 on: sourced in the guest
# from /usr/local/lib/wake-clock.sh (boot --file results/scx/wake-clock/lib.sh:/usr/local/lib/wake-clock.sh).
# Needs --tools perf (hb) and the guest's helpers (scx_start, scx_stop, fail).
# The loader runs as a background job of the calling shell: a workload
# that starts jobs of its own must wait for their pids, never a bare
# `wait` (which waits for the loader too: ../sync-wakeup/README.md).
# Lines printed: "RES SCHED-hb hackbench-4 ROUND SECONDS", "RES SCHED-wl
# wakelat ROUND REQ/S", "CNT SCHED ROUND cs N mig N", "LOG SCHED stats ..."
# (the loader's last counters line: its totals), "root-sleeper SCHED TRIAL
# ROUND RESULT {...}".
hb() {
  perf stat -a -x, -e context-switches,cpu-migrations -o /tmp/ps.txt \
    hackbench -g 4 -l 100 | awk '/^Time:/ {print $2}'
}
wl() { wakelat -m 2 -w 4 -d 5 | sed -n 's/^RESULT .*"rps": *\([0-9.]*\).*/\1/p'; }
run() {   # SCHED COMMAND...: COMMAND under scx_idlesteal.SCHED (or eevdf)
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
rotate() {   # ROUNDS FUNC SCHED...: ROUNDS rounds, the order rotated
  n=$1; f=$2; shift 2
  r=1
  while [ $r -le $n ]; do
    for s in "$@"; do run $s $f $s $r; done
    first=$1; shift; set -- "$@" $first
    r=$((r + 1))
  done
}
CG=/sys/fs/cgroup
trial() {   # SCHED NAME ROUND LIGHT_WEIGHT HEAVY_WEIGHT: the root sleeper
  mount -t cgroup2 none $CG 2>/dev/null
  echo "+cpu" > $CG/cgroup.subtree_control
  mkdir -p $CG/light $CG/heavy
  echo $4 > $CG/light/cpu.weight; echo $5 > $CG/heavy/cpu.weight
  sh -c "echo \$\$ > $CG/light/cgroup.procs; exec hogs -n 8 -w 1 -d 9" > /dev/null & a=$!
  sh -c "echo \$\$ > $CG/heavy/cgroup.procs; exec hogs -n 8 -w 1 -d 9" > /dev/null & b=$!
  sleep 1
  sleeplat -n 0 -p 100000 -w 1 -d 6 | grep RESULT | sed "s/^/root-sleeper $1 $2 $3 /"
  wait $a $b
}
rs() { trial $1 both-1-10000 $2 1 10000; trial $1 both-100-100 $2 100 100; }
pipe8one() {   # SCHED ROUND: 8 pipe pairs at once (perf bench sched pipe -l 5000), counted
  perf stat -a -x, -e context-switches,cpu-migrations -o /tmp/pps.txt -- sh -c '
    i=0; pids=
    while [ $i -lt 8 ]; do perf bench sched pipe -l 5000 > /tmp/pp.$i 2>&1 & pids="$pids $!"; i=$((i + 1)); done
    for j in $pids; do wait $j; done'
  echo "RES $1-pipe pipe-8 $2 $(cat /tmp/pp.* | awk '/usecs\/op/ {s += $1; n++} END {if (n == 8) printf "%.3f", s / n; else print "pairs-" n}')"
  echo "PCNT $1 $2 cs $(awk -F, '$3 == "context-switches" {print $1}' /tmp/pps.txt) mig $(awk -F, '$3 == "cpu-migrations" {print $1}' /tmp/pps.txt)"
}
