# exp35: -k switches off two things: the in-LLC arrival kick (about 110
# a loader run in exp34) and the move of a task queued behind another to
# an idle CPU of another LLC when none in its own is idle ("remote_idle",
# about 480).  Which one costs the pipe pairs?  "vnrw" (vnrw.diff): the
# move to another LLC only for tasks that did not just wake (a waking
# task had select_cpu's search of the node already); "vnc" (vnc.diff): no
# in-LLC kick, the move kept.  EEVDF, "cur" (eea10e4), cur -k ("nok"),
# vnrw, vnc; 8 pipe pairs (`perf bench sched pipe -l 5000`), hackbench -T
# -p -g 4 and hackbench -g 4 (-l 100), 6 rounds rotated, one 2x2x2 boot.
#   python3 results/scx/wake-clock/mkvar.py cur @eea10e4
#   python3 results/scx/wake-clock/mkvar.py vnrw results/scx/sync-wakeup/vnrw.diff
#   python3 results/scx/wake-clock/mkvar.py vnc results/scx/sync-wakeup/vnc.diff
#   python3 -m idlesteal boot --variant scx --preset 2x2x2 --no-build --tools perf \
#     --file build/wd/scx_idlesteal.cur:/usr/bin/scx_idlesteal.cur \
#     --file build/wd/scx_idlesteal.vnrw:/usr/bin/scx_idlesteal.vnrw \
#     --file build/wd/scx_idlesteal.vnc:/usr/bin/scx_idlesteal.vnc \
#     --file results/scx/wake-clock/lib.sh:/usr/local/lib/wake-clock.sh \
#     --script results/scx/sync-wakeup/exp35.sh --timeout 1500
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
rotate 6 one eevdf cur nok vnrw vnc
echo "state $(cat /sys/kernel/sched_ext/state)"
