# exp40: what ops.dispatch() costs on the pipe pairs when it only moves
# the head of this CPU's queue (vdfloor: vdfloor.diff, a floor, not a
# fix) against the loader as it is, by the kernel's BPF run-time
# statistics (scx_idlesteal --cost), 3 rounds rotated, one 2x2x2 boot.
#   python3 results/scx/wake-clock/mkvar.py vdfloor results/scx/dispatch-floor/vdfloor.diff
#   python3 -m idlesteal boot --variant scx --preset 2x2x2 --no-build --tools perf,sysbench \
#     --file build/scx-scx/build/bin/scx_idlesteal:/usr/bin/scx_idlesteal \
#     --file build/wd/scx_idlesteal.vdfloor:/usr/bin/scx_idlesteal.vdfloor \
#     --file results/scx/callback-cost/cost.sh:/usr/local/lib/cost.sh \
#     --script results/scx/dispatch-floor/cost40.sh --timeout 1500
LOADERS="scx_idlesteal scx_idlesteal.vdfloor"
. /usr/local/lib/cost.sh
