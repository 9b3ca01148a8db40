# exp27 hung at its first perf-pipe run under the loader: 8 pairs of
# `perf bench sched pipe -l 5000` had not finished after 13 minutes (EEVDF:
# 626 us/op, about 6 s).  Diagnosis: pairs 1, 2, 4, 8 at -l 200 under each,
# 60 s limit a run, the loader's last counters after each.
#   python3 -m idlesteal boot --variant scx --preset 2x2x2 --no-build --tools perf \
#     --file build/wd/scx_idlesteal.cur:/usr/bin/scx_idlesteal.cur \
#     --file build/wd/scx_idlesteal.nosync:/usr/bin/scx_idlesteal.nosync \
#     --file results/scx/wake-clock/lib.sh:/usr/local/lib/wake-clock.sh \
#     --script results/scx/sync-wakeup/diag28.sh --timeout 1500
# Lines: "PIPE SCHED PAIRS SECONDS RC", "LOG SCHED stats ...".
. /usr/local/lib/wake-clock.sh
for v in nop:-p nok:-k; do
  printf '#!/bin/sh\nexec scx_idlesteal.cur %s "$@"\n' ${v#*:} > /usr/bin/scx_idlesteal.${v%%:*}
  chmod +x /usr/bin/scx_idlesteal.${v%%:*}
done
pairs() {   # N: N pairs of 200 round trips at once, at most 60 s
  t0=$(date +%s.%N)
  i=0; pids=
  while [ $i -lt $1 ]; do
    timeout 60 perf bench sched pipe -l 200 > /dev/null 2>&1 & pids="$pids $!"; i=$((i + 1))
  done
  rc=0; for j in $pids; do wait $j || rc=$?; done
  echo "$(date +%s.%N) $t0 $rc" | awk '{printf "%.2f %s", $1 - $2, $3}'
}
allp() { for n in 1 2 4 8; do echo "PIPE $1 $n $(pairs $n)"; done; }
for s in eevdf cur nosync nop nok; do run $s allp $s; done
echo "state $(cat /sys/kernel/sched_ext/state)"
