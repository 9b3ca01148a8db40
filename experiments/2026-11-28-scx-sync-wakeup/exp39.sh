# exp39: exp38's two loaders on 2x2x2: EEVDF, "new" (a21ec33), "vaff2"
# (vaff2.diff); 8 pipe pairs (-l 5000), hackbench -T -p -g 4 and
# hackbench -g 4 (-l 100), 6 rounds rotated, one boot.
#   (loaders as in exp38.sh)
#   python3 -m idlesteal boot --variant scx --preset 2x2x2 --no-build --tools perf \
#     --file build/wd/scx_idlesteal.new:/usr/bin/scx_idlesteal.new \
#     --file build/wd/scx_idlesteal.vaff2:/usr/bin/scx_idlesteal.vaff2 \
#     --file results/scx/wake-clock/lib.sh:/usr/local/lib/wake-clock.sh \
#     --script results/scx/sync-wakeup/exp39.sh --timeout 1500
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
rotate 6 one eevdf new vaff2
echo "state $(cat /sys/kernel/sched_ext/state)"
