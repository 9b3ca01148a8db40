# exp41: 8 pipe pairs (`perf bench sched pipe -l 5000` x 8 at once) on
# 2x2x2 under EEVDF, the loader as it is ("cur", 10ebea2's
# tools/scx_idlesteal), vdfloor (vdfloor.diff: ops.dispatch() moves the
# head of this CPU's queue before anything else; a floor, not a fix) and
# the kernel's scx_simple (one global vtime queue), 8 rounds rotated,
# one boot.  Is what is left of the pairs' loss ours or sched_ext's?
#   python3 results/scx/wake-clock/mkvar.py vdfloor results/scx/dispatch-floor/vdfloor.diff
#   python3 -m idlesteal boot --variant scx --preset 2x2x2 --no-build --tools perf \
#     --file build/scx-scx/build/bin/scx_idlesteal:/usr/bin/scx_idlesteal.cur \
#     --file build/wd/scx_idlesteal.vdfloor:/usr/bin/scx_idlesteal.vdfloor \
#     --file build/scx-scx/build/bin/scx_simple:/usr/bin/scx_idlesteal.simple \
#     --file results/scx/wake-clock/lib.sh:/usr/local/lib/wake-clock.sh \
#     --script results/scx/dispatch-floor/exp41.sh --timeout 1500
# Lines: "RES SCHED-pipe pipe-8 ROUND USECS_PER_OP", "PCNT SCHED ROUND cs N mig N".
# (pipe8one moved to ../wake-clock/lib.sh after the run; the same commands.)
. /usr/local/lib/wake-clock.sh
one() {
  pipe8one $1 $2
}
rotate 8 one eevdf cur vdfloor simple
echo "state $(cat /sys/kernel/sched_ext/state)"
