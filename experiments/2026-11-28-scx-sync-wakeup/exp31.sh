# exp30: on 8 pipe pairs scx_simple is 1.10x EEVDF and the loader 2.0x, so
# the loss is the loader's own.  Which part: the loader ("cur", eea10e4)
# as it is and with one switch each: -o (no stealing: no steals, no pulls,
# no moves to an idle CPU of another LLC), -k (no arrival kick), -p (no
# wakeup preemption), -f (fixed slices); EEVDF and scx_simple beside.
# 8 pairs of `perf bench sched pipe -l 5000`, 5 rounds rotated, one 2x2x2 boot.
#   python3 results/scx/wake-clock/mkvar.py cur @eea10e4
#   python3 -m idlesteal boot --variant scx --preset 2x2x2 --no-build --tools perf \
#     --file build/wd/scx_idlesteal.cur:/usr/bin/scx_idlesteal.cur \
#     --file build/scx-scx/build/bin/scx_simple:/usr/bin/scx_idlesteal.simple \
#     --file results/scx/wake-clock/lib.sh:/usr/local/lib/wake-clock.sh \
#     --script results/scx/sync-wakeup/exp31.sh --timeout 1500
# Lines: "RES SCHED-pipe pipe-8 ROUND USECS_PER_OP", "LOG SCHED stats ...".
. /usr/local/lib/wake-clock.sh
for v in off:-o nok:-k nop:-p fix:-f; do
  printf '#!/bin/sh\nexec scx_idlesteal.cur %s "$@"\n' ${v#*:} > /usr/bin/scx_idlesteal.${v%%:*}
  chmod +x /usr/bin/scx_idlesteal.${v%%:*}
done
pipe8() {
  i=0; pids=
  while [ $i -lt 8 ]; do perf bench sched pipe -l 5000 > /tmp/pp.$i 2>&1 & pids="$pids $!"; i=$((i + 1)); done
  for j in $pids; do wait $j; done   # not a bare wait: the loader is a job of this shell too
  echo "RES $1-pipe pipe-8 $2 $(cat /tmp/pp.* | awk '/usecs\/op/ {s += $1; n++} END {if (n == 8) printf "%.3f", s / n; else print "pairs-" n}')"
}
rotate 5 pipe8 eevdf cur off nok nop fix simple
echo "state $(cat /sys/kernel/sched_ext/state)"
