# Does counting the queue at each ops.running() cost?  task_slice() asks
# scx_bpf_dsq_nr_queued() (a hash table lookup by DSQ id) at each start,
# and sched_yield() that keeps its slice still goes through ops.stopping()
# and ops.running(): 1M yields, 1M lookups.  "vslice" (vslice.diff, against
# 8272670): the CPU's overload bit first; clear, the full slice without the
# count.  Against "head" (8272670's loader) and EEVDF: sysbench threads 1
# and 8 (1000 events: 1M yields), 6 rounds rotated.  One 2x2x2 boot.
#   python3 results/scx/wake-clock/mkvar.py head -
#   python3 results/scx/wake-clock/mkvar.py vslice results/scx/yield-cost/vslice.diff
#   python3 -m idlesteal boot --variant scx --preset 2x2x2 --no-build --tools sysbench \
#     --file build/wd/scx_idlesteal.head:/usr/bin/scx_idlesteal.head \
#     --file build/wd/scx_idlesteal.vslice:/usr/bin/scx_idlesteal.vslice \
#     --file results/scx/wake-clock/lib.sh:/usr/local/lib/wake-clock.sh \
#     --script results/scx/yield-cost/exp23.sh --timeout 1500
# Lines: "RES SCHED-THREADS sysbench ROUND SECONDS", "LOG ..." (lib.sh).
. /usr/local/lib/wake-clock.sh
sb() { sysbench threads --threads=$1 --events=1000 --time=0 run | awk '/total time:/ {sub("s","",$3); print $3}'; }
sbone() { echo "RES $1-1 sysbench $2 $(sb 1)"; echo "RES $1-8 sysbench $2 $(sb 8)"; }
run vslice sleep 2
rotate 6 sbone eevdf head vslice
echo "state $(cat /sys/kernel/sched_ext/state)"
