# exp34: exp33 and results/scx/kick-pipe/ put the pipe pairs' loss in the
# arrival kick: 3x the moves of waiting tasks and 3x their bounces, and no
# less wasted CPU.  A kick pays when the task waits long for its CPU, not
# when the CPU's running task stops sooner than a search costs.  "vsh"
# (vsh.diff): no kick (and no move to another LLC) for a task queued behind
# a task whose average run, less what it has run, is below the CPU's
# average search cost (the kernel's newidle balance weighs avg_idle against
# its search cost the same way); counter short_nokick.
# EEVDF, "cur" (eea10e4), cur -k ("nok"), vsh; 8 pipe pairs
# (`perf bench sched pipe -l 5000`), hackbench -T -p -g 4 and hackbench
# -g 4 (-l 100), 6 rounds rotated, one 2x2x2 boot.
#   python3 results/scx/wake-clock/mkvar.py cur @eea10e4
#   python3 results/scx/wake-clock/mkvar.py vsh results/scx/sync-wakeup/vsh.diff
#   python3 -m idlesteal boot --variant scx --preset 2x2x2 --no-build --tools perf \
#     --file build/wd/scx_idlesteal.cur:/usr/bin/scx_idlesteal.cur \
#     --file build/wd/scx_idlesteal.vsh:/usr/bin/scx_idlesteal.vsh \
#     --file results/scx/wake-clock/lib.sh:/usr/local/lib/wake-clock.sh \
#     --script results/scx/sync-wakeup/exp34.sh --timeout 1500
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
rotate 6 one eevdf cur nok vsh
echo "state $(cat /sys/kernel/sched_ext/state)"
