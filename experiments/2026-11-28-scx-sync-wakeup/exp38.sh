# exp38: the loader with none_idle (a21ec33, "new") and the same with
# vaff's placement ("vaff2", vaff2.diff: a sync wakee to its waker's CPU
# when no CPU is idle and nothing else waits there, as the fair class's
# wake_affine_idle() for a waker running alone; the wakee, queued with no
# idle CPU found, is not kicked for since a21ec33).  On 1x1x2 with 2
# pairs a split pair's wakee waits behind the other pair's task on its
# previous CPU.  EEVDF, new, vaff2; 2 and 4 pipe pairs (-l 5000) and
# hackbench -g 2 (-l 100), 8 rounds rotated, one 1x1x2 boot.
#   python3 results/scx/wake-clock/mkvar.py new @a21ec33
#   python3 results/scx/wake-clock/mkvar.py vaff2 results/scx/sync-wakeup/vaff2.diff   (on a21ec33's tree)
#   python3 -m idlesteal boot --variant scx --preset 1x1x2 --no-build --tools perf \
#     --file build/wd/scx_idlesteal.new:/usr/bin/scx_idlesteal.new \
#     --file build/wd/scx_idlesteal.vaff2:/usr/bin/scx_idlesteal.vaff2 \
#     --file results/scx/wake-clock/lib.sh:/usr/local/lib/wake-clock.sh \
#     --script results/scx/sync-wakeup/exp38.sh --timeout 1500
# Lines: "RES SCHED-pipeN pipe-N ROUND USECS_PER_OP", "RES SCHED-hb2
# hackbench-2 ROUND SECONDS", "LOG SCHED stats ...".
. /usr/local/lib/wake-clock.sh
pairs() {   # N SCHED ROUND
  i=0; pids=; rm -f /tmp/pp.*
  while [ $i -lt $1 ]; do perf bench sched pipe -l 5000 > /tmp/pp.$i 2>&1 & pids="$pids $!"; i=$((i + 1)); done
  for j in $pids; do wait $j; done   # not a bare wait: the loader is a job of this shell too
  echo "RES $2-pipe$1 pipe-$1 $3 $(cat /tmp/pp.* | awk -v n0=$1 '/usecs\/op/ {s += $1; n++} END {if (n == n0) printf "%.3f", s / n; else print "pairs-" n}')"
}
one() {
  pairs 2 $1 $2; pairs 4 $1 $2
  echo "RES $1-hb2 hackbench-2 $2 $(hackbench -g 2 -l 100 | awk '/^Time:/ {print $2}')"
}
rotate 8 one eevdf new vaff2
echo "state $(cat /sys/kernel/sched_ext/state)"
