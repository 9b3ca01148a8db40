# exp7 (and exp6) put 13a77e0's scx_idlesteal ("new") at 1.12-1.18x
# EEVDF's time on hackbench 4 groups, and vnow no faster: which commit since
# cf52d45 (the source of exp3-exp5's "new", a5f9157's BPF) moved it.
# Loaders built from each commit's tools/scx_idlesteal (build/wd/mkvar.py
# NAME @COMMIT); one 2x2x2 boot, 8 rounds rotated.  Part 2 (for
# ../yield-cost/): sysbench threads 1 and 8 (1000 events: 1M sched_yield())
# under EEVDF, new, and "vynoop" (vynoop.diff: ops.yield returns at once,
# keeping the slice: sched_ext's yield path with nothing of ours in it),
# 6 rounds rotated.
#   python3 -m idlesteal boot --variant scx --preset 2x2x2 --no-build --tools sysbench \
#     --file build/wd/scx_idlesteal.new:/usr/bin/scx_idlesteal.new \
#     --file build/wd/scx_idlesteal.cf52d45:/usr/bin/scx_idlesteal.cf52d45 \
#     --file build/wd/scx_idlesteal.ca1c136:/usr/bin/scx_idlesteal.ca1c136 \
#     --file build/wd/scx_idlesteal.2bcb4a4:/usr/bin/scx_idlesteal.2bcb4a4 \
#     --file build/wd/scx_idlesteal.vynoop:/usr/bin/scx_idlesteal.vynoop \
#     --script results/scx/wake-clock/exp8.sh
# Lines: "RES SCHED WORKLOAD ROUND SECONDS".
hb() { hackbench -g 4 -l 100 > /dev/null; hackbench -g 4 -l 100 | awk '/^Time:/ {print $2}'; }
sb() { sysbench threads --threads=$1 --events=1000 --time=0 run | awk '/total time:/ {sub("s","",$3); print $3}'; }
run() {   # SCHED ROUND COMMAND...
  s=$1; shift
  if [ $s != eevdf ]; then scx_start /tmp/$s.log scx_idlesteal.$s > /dev/null || fail "$s did not load"; fi
  "$@"
  if [ $s != eevdf ]; then scx_stop > /dev/null || fail "$s did not unload"; fi
}
hbone() { echo "RES $1 hackbench-4 $2 $(hb)"; }
sbone() { echo "RES $1-1 sysbench $2 $(sb 1)"; echo "RES $1-8 sysbench $2 $(sb 8)"; }
set -- eevdf cf52d45 ca1c136 2bcb4a4 new
for r in 1 2 3 4 5 6 7 8; do
  for s in "$@"; do run $s hbone $s $r; done
  first=$1; shift; set -- "$@" $first
done
set -- eevdf new vynoop
for r in 1 2 3 4 5 6; do
  for s in "$@"; do run $s sbone $s $r; done
  first=$1; shift; set -- "$@" $first
done
echo "state $(cat /sys/kernel/sched_ext/state)"
