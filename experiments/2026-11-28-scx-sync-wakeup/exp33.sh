# exp33: -k (no arrival kick, no move to an idle CPU of another LLC) took
# 0.72x the loader's time off 8 pipe pairs (exp31), but the kick stayed
# for hackbench's wasted CPU.  Every wakeup in both is sync; what
# differs is the waker: a pipe pair's waker wakes one task a run and
# sleeps, a hackbench sender wakes many.  "vsr" (vsr.diff): no kick and no
# move for any sync wakee (queued on its CPU); "vpp" (vpp.diff): the same
# only when the waker's runs woke more than one task in under 1/4 of them
# (a decaying average kept at ops.stopping(), counter pair_nokick).
# EEVDF, "cur" (eea10e4), cur -k ("nok"), vsr, vpp; 8 pipe pairs
# (`perf bench sched pipe -l 5000`), hackbench -T -p -g 4 and hackbench
# -g 4 (-l 100), 6 rounds rotated, one 2x2x2 boot.
#   python3 results/scx/wake-clock/mkvar.py cur @eea10e4
#   python3 results/scx/wake-clock/mkvar.py vsr results/scx/sync-wakeup/vsr.diff
#   python3 results/scx/wake-clock/mkvar.py vpp results/scx/sync-wakeup/vpp.diff
#   python3 -m idlesteal boot --variant scx --preset 2x2x2 --no-build --tools perf \
#     --file build/wd/scx_idlesteal.cur:/usr/bin/scx_idlesteal.cur \
#     --file build/wd/scx_idlesteal.vsr:/usr/bin/scx_idlesteal.vsr \
#     --file build/wd/scx_idlesteal.vpp:/usr/bin/scx_idlesteal.vpp \
#     --file results/scx/wake-clock/lib.sh:/usr/local/lib/wake-clock.sh \
#     --script results/scx/sync-wakeup/exp33.sh --timeout 1500
# Lines: as exp29's.
. /usr/local/lib/wake-clock.sh
printf '#!/bin/sh\nexec scx_idlesteal.cur -k "$@"\n' > /usr/bin/scx_idlesteal.nok
chmod +x /usr/bin/scx_idlesteal.nok
one() {
  i=0; pids=
  while [ $i -lt 8 ]; do perf bench sched pipe -l 5000 > /tmp/pp.$i 2>&1 & pids="$pids $!"; i=$((i + 1)); done
  for j in $pids; do wait $j; done   # not a bare wait: the loader is a job of this shell too
  echo "RES $1-pipe pipe-8 $2 $(cat /tmp/pp.* | awk '/usecs\/op/ {s += $1; n++} END {if (n == 8) printf "%.3f", s / n; else print "pairs-" n}')"
  echo "RES $1-hbtp hackbench-T-p-4 $2 $(hackbench -T -p -g 4 -l 100 | awk '/^Time:/ {print $2}')"
  hbone $1 $2
}
rotate 6 one eevdf cur nok vsr vpp
echo "state $(cat /sys/kernel/sched_ext/state)"
