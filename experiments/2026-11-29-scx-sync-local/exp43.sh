# exp43: the direct local insert of a sync wakee ("new", the work tree:
# no CPU idle, nothing waiting on the waker's CPU) cost hackbench threads
# with pipes (1.19x cur's time in the side-by-side of this folder).  Two
# ways to keep its gain on the pipe pairs without that: vC (vC.diff: only
# when the waker's CPU is the wakee's previous one: a pair that already
# shares a CPU) and vD (vD.diff: the waker's slice cut to the shortest,
# 1 ms, so a waker that does not sleep lets the wakee run within that).
# EEVDF, cur (HEAD), new, vC, vD; 8 pipe pairs, hackbench -T -p 2 groups
# 200 loops, hackbench 4 groups; 6 rounds rotated, one 2x2x2 boot.
#   python3 results/scx/wake-clock/mkvar.py cur @HEAD   (and new -, vC/vD DIFF)
#   python3 -m idlesteal boot --variant scx --preset 2x2x2 --no-build --tools perf \
#     --file build/wd/scx_idlesteal.cur:/usr/bin/scx_idlesteal.cur (same for new, vC, vD) \
#     --file results/scx/wake-clock/lib.sh:/usr/local/lib/wake-clock.sh \
#     --script results/scx/sync-local/exp43.sh --timeout 1500
. /usr/local/lib/wake-clock.sh
one() {
  i=0; pids=
  while [ $i -lt 8 ]; do perf bench sched pipe -l 5000 > /tmp/pp.$i 2>&1 & pids="$pids $!"; i=$((i + 1)); done
  for j in $pids; do wait $j; done
  echo "RES $1-pipe pipe-8 $2 $(cat /tmp/pp.* | awk '/usecs\/op/ {s += $1; n++} END {if (n == 8) printf "%.3f", s / n; else print "pairs-" n}')"
  echo "RES $1-tp hackbench-T-p-2 $2 $(hackbench -T -p -g 2 -l 200 | awk '/^Time:/ {print $2}')"
  hbone $1 $2
}
rotate 6 one eevdf cur new vC vD
echo "state $(cat /sys/kernel/sched_ext/state)"
