# exp41: 8 pipe pairs (`perf bench sched pipe -l 5000` x 8 at once) on
# 2x2x2 under EEVDF, the loader as it is ("cur", 10ebea2's
# tools/scx_idlesteal), vdfloor (vdfloor.diff: ops.dispatch() moves the
# head of this CPU's queue before anything else; a floor, not a fix) and
# the kernel's scx_simple (one global vtime queue), 8 rounds rotated,
# one boot.  Is what is left of the pairs' loss ours or sched_ext's?
#   python3 results/scx/wake-clock/mkvar.py vdfloor results/scx/dispatch-floor/vdfloor.diff
#   python3 -m idlesteal boot --variant scx --preset 2x2x2 --no-build --tools perf \
#     --file build/scx-scx/build/bin/scx_idlesteal:/usr/bin/scx_idlesteal.cur \
#     --file build/wd/scx_idlesteal.vdfloor:/usr/bin/scx_idlesteal.vdfloor \
#     --file build/scx-scx/build/bin/scx_simple:/usr/bin/scx_idlesteal.simple \
#     --file results/scx/wake-clock/lib.sh:/usr/local/lib/wake-clock.sh \
#     --script results/scx/dispatch-floor/exp41.sh --timeout 1500
# Lines: "RES SCHED-pipe pipe-8 ROUND USECS_PER_OP", "PCNT SCHED ROUND cs N mig N".
. /usr/local/lib/wake-clock.sh
one() {
  perf stat -a -x, -e context-switches,cpu-migrations -o /tmp/pps.txt -- sh -c '
    i=0; pids=
    while [ $i -lt 8 ]; do perf bench sched pipe -l 5000 > /tmp/pp.$i 2>&1 & pids="$pids $!"; i=$((i + 1)); done
    for j in $pids; do wait $j; done'
  echo "RES $1-pipe pipe-8 $2 $(cat /tmp/pp.* | awk '/usecs\/op/ {s += $1; n++} END {if (n == 8) printf "%.3f", s / n; else print "pairs-" n}')"
  echo "PCNT $1 $2 cs $(awk -F, '$3 == "context-switches" {print $1}' /tmp/pps.txt) mig $(awk -F, '$3 == "cpu-migrations" {print $1}' /tmp/pps.txt)"
}
rotate 8 one eevdf cur vdfloor simple
echo "state $(cat /sys/kernel/sched_ext/state)"
