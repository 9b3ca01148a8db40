# exp31: the loader's loss on 8 pipe pairs is its stealing and arrival
# kicks (-o 0.69x, -k 0.72x its time).  "vsk" (vsk.diff): vaff (a sync
# wakee queued on the waker's CPU when no CPU is idle and nothing else
# waits there) and no kick for such a wakee (it runs when the waker
# sleeps).  EEVDF, "cur" (eea10e4), vaff, vsk; 8 pipe pairs
# (`perf bench sched pipe -l 5000`), hackbench -T -p -g 4, hackbench -g 4
# (-l 100), 6 rounds rotated, one 2x2x2 boot.
#   python3 results/scx/wake-clock/mkvar.py cur @eea10e4
#   python3 results/scx/wake-clock/mkvar.py vaff results/scx/sync-wakeup/vaff.diff
#   python3 results/scx/wake-clock/mkvar.py vsk results/scx/sync-wakeup/vsk.diff
#   python3 -m idlesteal boot --variant scx --preset 2x2x2 --no-build --tools perf \
#     --file build/wd/scx_idlesteal.cur:/usr/bin/scx_idlesteal.cur \
#     --file build/wd/scx_idlesteal.vaff:/usr/bin/scx_idlesteal.vaff \
#     --file build/wd/scx_idlesteal.vsk:/usr/bin/scx_idlesteal.vsk \
#     --file results/scx/wake-clock/lib.sh:/usr/local/lib/wake-clock.sh \
#     --script results/scx/sync-wakeup/exp32.sh --timeout 1500
# Lines: as exp29's.
. /usr/local/lib/wake-clock.sh
one() {
  i=0; pids=
  while [ $i -lt 8 ]; do perf bench sched pipe -l 5000 > /tmp/pp.$i 2>&1 & pids="$pids $!"; i=$((i + 1)); done
  for j in $pids; do wait $j; done   # not a bare wait: the loader is a job of this shell too
  echo "RES $1-pipe pipe-8 $2 $(cat /tmp/pp.* | awk '/usecs\/op/ {s += $1; n++} END {if (n == 8) printf "%.3f", s / n; else print "pairs-" n}')"
  echo "RES $1-hbtp hackbench-T-p-4 $2 $(hackbench -T -p -g 4 -l 100 | awk '/^Time:/ {print $2}')"
  hbone $1 $2
}
rotate 6 one eevdf cur vaff vsk
echo "state $(cat /sys/kernel/sched_ext/state)"
