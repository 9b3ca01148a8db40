# exp24 on 2x2x2 (8 vCPUs on the 2-core host), the bench's cell there:
# sysbench threads at 8 threads (1000 events, 1M sched_yield()), EEVDF
# against "cur" (the loader of eea10e4) and "ynoop" (vynoop.diff: ops.yield
# returns false at once, the floor of any sched_ext scheduler on this
# path), 8 rounds rotated, one boot.
#   python3 results/scx/wake-clock/mkvar.py cur -
#   python3 results/scx/wake-clock/mkvar.py ynoop results/scx/yield-cost/vynoop.diff
#   python3 -m idlesteal boot --variant scx --preset 2x2x2 --no-build --tools sysbench \
#     --file build/wd/scx_idlesteal.cur:/usr/bin/scx_idlesteal.cur \
#     --file build/wd/scx_idlesteal.ynoop:/usr/bin/scx_idlesteal.ynoop \
#     --file results/scx/wake-clock/lib.sh:/usr/local/lib/wake-clock.sh \
#     --script results/scx/yield-cost/exp26.sh --timeout 1500
# Lines: "RES SCHED-8 sysbench ROUND SECONDS".
. /usr/local/lib/wake-clock.sh
sb8() { echo "RES $1-8 sysbench $2 $(sysbench threads --threads=8 --events=1000 --time=0 run | awk '/total time:/ {sub("s","",$3); print $3}')"; }
rotate 8 sb8 eevdf cur ynoop
echo "state $(cat /sys/kernel/sched_ext/state)"
