# Is 1x1x2's sysbench-threads loss (1.38x EEVDF in the bench of 7d1a854)
# scx_idlesteal's or sched_ext's?  EEVDF against the loader ("cur", the
# work tree at eea10e4), "ynoop" (ops.yield returns false at once: the
# least any sched_ext scheduler that keeps a yielder's slice can do; not a
# fix) and the kernel's scx_simple (no ops.yield: every yield ends the
# slice).  sysbench threads at 1 and 2 threads (1000 events: 1M
# sched_yield() a run), 6 rounds rotated, one 1x1x2 boot; then one
# cpu-clock profile of 2 threads under EEVDF and under cur.
#   python3 results/scx/wake-clock/mkvar.py cur -
#   python3 results/scx/wake-clock/mkvar.py ynoop results/scx/yield-cost/vynoop.diff
#   python3 -m idlesteal boot --variant scx --preset 1x1x2 --no-build --tools perf,sysbench \
#     --file build/wd/scx_idlesteal.cur:/usr/bin/scx_idlesteal.cur \
#     --file build/wd/scx_idlesteal.ynoop:/usr/bin/scx_idlesteal.ynoop \
#     --file build/scx-scx/build/bin/scx_simple:/usr/bin/scx_idlesteal.simple \
#     --file results/scx/wake-clock/lib.sh:/usr/local/lib/wake-clock.sh \
#     --script results/scx/yield-cost/exp24.sh --timeout 1500
# Lines: "RES SCHED-THREADS sysbench ROUND SECONDS", "PROF SCHED ...".
. /usr/local/lib/wake-clock.sh
sb() { sysbench threads --threads=$1 --events=1000 --time=0 run | awk '/total time:/ {sub("s","",$3); print $3}'; }
sbone() { echo "RES $1-1 sysbench $2 $(sb 1)"; echo "RES $1-2 sysbench $2 $(sb 2)"; }
rotate 6 sbone eevdf cur ynoop simple
echo 1 > /proc/sys/net/core/bpf_jit_kallsyms
prof() {
  perf record -q -a -e cpu-clock -F 4000 -o /tmp/p.data -- \
    sysbench threads --threads=2 --events=500 --time=0 run > /dev/null 2>&1
  perf report -i /tmp/p.data --stdio --sort sym --no-children 2>/dev/null |
    grep -v '^#' | grep -v '^$' | head -40 | sed "s/^/PROF $1 /"
}
prof eevdf
scx_start /tmp/cur.log scx_idlesteal.cur > /dev/null || fail "cur did not load"
prof cur
scx_stop > /dev/null
echo "state $(cat /sys/kernel/sched_ext/state)"
