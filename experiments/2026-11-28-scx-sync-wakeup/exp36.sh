# exp36: is the pipe pairs' loss there without vCPU over-commit?  1x1x2
# (2 vCPUs on the 2-core host, one LLC): EEVDF, "cur" (eea10e4), cur -k
# ("nok"); 2 and 4 pairs of `perf bench sched pipe -l 5000` at once,
# 8 rounds rotated, one boot.
#   python3 results/scx/wake-clock/mkvar.py cur @eea10e4
#   python3 -m idlesteal boot --variant scx --preset 1x1x2 --no-build --tools perf \
#     --file build/wd/scx_idlesteal.cur:/usr/bin/scx_idlesteal.cur \
#     --file results/scx/wake-clock/lib.sh:/usr/local/lib/wake-clock.sh \
#     --script results/scx/sync-wakeup/exp36.sh --timeout 1500
# Lines: "RES SCHED-pipeN pipe-N ROUND USECS_PER_OP", "LOG SCHED stats ...".
. /usr/local/lib/wake-clock.sh
printf '#!/bin/sh\nexec scx_idlesteal.cur -k "$@"\n' > /usr/bin/scx_idlesteal.nok
chmod +x /usr/bin/scx_idlesteal.nok
pairs() {   # N SCHED ROUND
  i=0; pids=; rm -f /tmp/pp.*
  while [ $i -lt $1 ]; do perf bench sched pipe -l 5000 > /tmp/pp.$i 2>&1 & pids="$pids $!"; i=$((i + 1)); done
  for j in $pids; do wait $j; done   # not a bare wait: the loader is a job of this shell too
  echo "RES $2-pipe$1 pipe-$1 $3 $(cat /tmp/pp.* | awk -v n0=$1 '/usecs\/op/ {s += $1; n++} END {if (n == n0) printf "%.3f", s / n; else print "pairs-" n}')"
}
one() { pairs 2 $1 $2; pairs 4 $1 $2; }
rotate 8 one eevdf cur nok
echo "state $(cat /sys/kernel/sched_ext/state)"
