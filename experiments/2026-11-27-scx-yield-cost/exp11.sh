# Which part of ops.yield costs sysbench threads (exp10 of ../wake-clock/:
# new 1.30x EEVDF at 1 thread, vynoop, ops.yield returning at once, 1.10x):
# sysbench threads 1 and 8 (1000 events: 1M sched_yield()) under EEVDF,
# "new" (13a77e0's source), vynoop (vynoop.diff), "vyq" (vyq.diff: only the CPU's own
# queue is looked at, not the fallback queue) and "vybit" (vybit.diff: the
# CPU's overload bit instead of counting its queue, no kfunc), 5 rounds
# rotated, one 2x2x2 boot.  Loaders: build/wd/mkvar.py NAME DIFF (not in git).
#   python3 -m idlesteal boot --variant scx --preset 2x2x2 --no-build --tools sysbench \
#     --file build/wd/scx_idlesteal.new:/usr/bin/scx_idlesteal.new \
#     --file build/wd/scx_idlesteal.vynoop:/usr/bin/scx_idlesteal.vynoop \
#     --file build/wd/scx_idlesteal.vyq:/usr/bin/scx_idlesteal.vyq \
#     --file build/wd/scx_idlesteal.vybit:/usr/bin/scx_idlesteal.vybit \
#     --script results/scx/yield-cost/exp11.sh --timeout 1200
# Lines: "RES SCHED-THREADS sysbench ROUND SECONDS".
sb() { sysbench threads --threads=$1 --events=1000 --time=0 run | awk '/total time:/ {sub("s","",$3); print $3}'; }
run() {   # SCHED COMMAND...
  s=$1; shift
  if [ $s != eevdf ]; then scx_start /tmp/$s.log scx_idlesteal.$s > /dev/null || fail "$s did not load"; fi
  "$@"
  if [ $s != eevdf ]; then scx_stop > /dev/null || fail "$s did not unload"; fi
}
sbone() { echo "RES $1-1 sysbench $2 $(sb 1)"; echo "RES $1-8 sysbench $2 $(sb 8)"; }
set -- eevdf new vynoop vyq vybit
for r in 1 2 3 4 5; do
  for s in "$@"; do run $s sbone $s $r; done
  first=$1; shift; set -- "$@" $first
done
echo "state $(cat /sys/kernel/sched_ext/state)"
