# exp37: on 1x1x2 (exp36) -k took 19% off 2 pipe pairs with 4-5 kicks a
# loader run, so what -k saves is not the kicks but the two idle searches
# every queued enqueue makes (claim_idle_stealer(), then
# scx_bpf_pick_idle_cpu() across the node), about 50,000 a run there,
# nearly all finding nothing: scx_bpf_select_cpu_dfl() had looked a
# moment before.  "vsel" (vsel.diff): a wakee for which ops.select_cpu()
# found no idle CPU is queued without searching again (counter
# none_idle); other enqueues (slice ends, the sync path that found the
# waker's CPU) search as before.  EEVDF, "cur" (eea10e4), cur -k ("nok"),
# vsel; 8 pipe pairs (`perf bench sched pipe -l 5000`), hackbench -T -p
# -g 4 and hackbench -g 4 (-l 100), 6 rounds rotated, one 2x2x2 boot.
#   python3 results/scx/wake-clock/mkvar.py cur @eea10e4
#   python3 results/scx/wake-clock/mkvar.py vsel results/scx/sync-wakeup/vsel.diff
#   python3 -m idlesteal boot --variant scx --preset 2x2x2 --no-build --tools perf \
#     --file build/wd/scx_idlesteal.cur:/usr/bin/scx_idlesteal.cur \
#     --file build/wd/scx_idlesteal.vsel:/usr/bin/scx_idlesteal.vsel \
#     --file results/scx/wake-clock/lib.sh:/usr/local/lib/wake-clock.sh \
#     --script results/scx/sync-wakeup/exp37.sh --timeout 1500
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
rotate 6 one eevdf cur nok vsel
echo "state $(cat /sys/kernel/sched_ext/state)"
