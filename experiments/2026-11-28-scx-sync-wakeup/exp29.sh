# Sync wakeups with no idle CPU ("vaff": queued on the waker's CPU when
# nothing else waits there, as the fair class's wake_affine_idle() does for
# a waker running alone) against the loader ("cur", eea10e4's source) and
# EEVDF: 8 pairs of `perf bench sched pipe -l 5000` at once (exp27: cur
# 2.04x EEVDF's usecs/op), hackbench -T -p -g 4 and hackbench -g 4 (-l 100),
# 8 rounds rotated, one 2x2x2 boot.
#   python3 results/scx/wake-clock/mkvar.py cur @eea10e4
#   python3 results/scx/wake-clock/mkvar.py vaff -     (the work tree with the change)
#   python3 -m idlesteal boot --variant scx --preset 2x2x2 --no-build --tools perf \
#     --file build/wd/scx_idlesteal.cur:/usr/bin/scx_idlesteal.cur \
#     --file build/wd/scx_idlesteal.vaff:/usr/bin/scx_idlesteal.vaff \
#     --file results/scx/wake-clock/lib.sh:/usr/local/lib/wake-clock.sh \
#     --script results/scx/sync-wakeup/exp29.sh --timeout 1500
# Lines: "RES SCHED-pipe pipe-8 ROUND USECS_PER_OP" (mean of the 8 pairs),
# "RES SCHED-hbtp ...", "RES SCHED-hb ... SECONDS", "CNT ...", "LOG SCHED stats ...".
. /usr/local/lib/wake-clock.sh
one() {
  i=0; pids=
  while [ $i -lt 8 ]; do perf bench sched pipe -l 5000 > /tmp/pp.$i 2>&1 & pids="$pids $!"; i=$((i + 1)); done
  for j in $pids; do wait $j; done   # not a bare wait: the loader is a job of this shell too
  echo "RES $1-pipe pipe-8 $2 $(cat /tmp/pp.* | awk '/usecs\/op/ {s += $1; n++} END {if (n == 8) printf "%.3f", s / n; else print "pairs-" n}')"
  echo "RES $1-hbtp hackbench-T-p-4 $2 $(hackbench -T -p -g 4 -l 100 | awk '/^Time:/ {print $2}')"
  hbone $1 $2
}
rotate 8 one eevdf cur vaff
echo "state $(cat /sys/kernel/sched_ext/state)"
