# ops.yield reading the overload bit and the fallback gate instead of
# counting the two queues ("yfast": the source of the commit that makes the
# change, built with ../wake-clock/mkvar.py yfast -), against "new"
# (13a77e0's source) and EEVDF: sysbench threads 1 and 8 (1000 events: 1M
# sched_yield()), 8 rounds rotated, one 2x2x2 boot.
#   python3 -m idlesteal boot --variant scx --preset 2x2x2 --no-build --tools sysbench \
#     --file build/wd/scx_idlesteal.new:/usr/bin/scx_idlesteal.new \
#     --file build/wd/scx_idlesteal.yfast:/usr/bin/scx_idlesteal.yfast \
#     --script results/scx/yield-cost/exp12.sh --timeout 1200
# Lines: "RES SCHED-THREADS sysbench ROUND SECONDS".
sb() { sysbench threads --threads=$1 --events=1000 --time=0 run | awk '/total time:/ {sub("s","",$3); print $3}'; }
run() {   # SCHED COMMAND...
  s=$1; shift
  if [ $s != eevdf ]; then scx_start /tmp/$s.log scx_idlesteal.$s > /dev/null || fail "$s did not load"; fi
  "$@"
  if [ $s != eevdf ]; then scx_stop > /dev/null || fail "$s did not unload"; fi
}
sbone() { echo "RES $1-1 sysbench $2 $(sb 1)"; echo "RES $1-8 sysbench $2 $(sb 8)"; }
set -- eevdf new yfast
for r in 1 2 3 4 5 6 7 8; do
  for s in "$@"; do run $s sbone $s $r; done
  first=$1; shift; set -- "$@" $first
done
echo "state $(cat /sys/kernel/sched_ext/state)"
