# Is exp27/exp29's pipe-8 loss (8 pairs of `perf bench sched pipe -l 5000`
# at once on 8 CPUs: the loader 2.0x EEVDF's usecs/op) scx_idlesteal's or
# sched_ext's?  EEVDF, "cur" (eea10e4's loader), "vaff" (vaff.diff) and the
# kernel's scx_simple (global vtime queue, nothing per CPU), with
# hackbench -g 4 beside, 6 rounds rotated, one 2x2x2 boot.
#   python3 results/scx/wake-clock/mkvar.py cur @eea10e4
#   python3 results/scx/wake-clock/mkvar.py vaff results/scx/sync-wakeup/vaff.diff
#   python3 -m idlesteal boot --variant scx --preset 2x2x2 --no-build --tools perf \
#     --file build/wd/scx_idlesteal.cur:/usr/bin/scx_idlesteal.cur \
#     --file build/wd/scx_idlesteal.vaff:/usr/bin/scx_idlesteal.vaff \
#     --file build/scx-scx/build/bin/scx_simple:/usr/bin/scx_idlesteal.simple \
#     --file results/scx/wake-clock/lib.sh:/usr/local/lib/wake-clock.sh \
#     --script results/scx/sync-wakeup/exp30.sh --timeout 1500
# Lines: "RES SCHED-pipe pipe-8 ROUND USECS_PER_OP", "RES SCHED-hb ...",
# "CNT SCHED ROUND cs N mig N" (hackbench's), "PCNT SCHED ROUND cs N mig N" (pipe-8's).
# (pipe8one moved to ../wake-clock/lib.sh after the run; the same commands.)
. /usr/local/lib/wake-clock.sh
one() {
  pipe8one $1 $2
  hbone $1 $2
}
rotate 6 one eevdf cur vaff simple
echo "state $(cat /sys/kernel/sched_ext/state)"
