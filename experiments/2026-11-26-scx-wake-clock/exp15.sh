# Did placing short sleepers against vtime_now (de507de) cost wakelat?
# results/scx/2x2x2-de507de/ had wakelat 2 at 0.76x EEVDF's requests (p
# 0.024; 0.95 [0.61, 1.29] the day before).  "cur" (dd48435's work tree:
# before the split, exp13's), "split" (de507de's source), EEVDF: wakelat
# -m 2 -w 4 -d 5 (the suite's cell), 6 rounds rotated, and hackbench 4
# groups once per round as exp14's check.  One 2x2x2 boot.
# Loaders: mkvar.py NAME DIFF (build/wd/, not in git).
#   python3 -m idlesteal boot --variant scx --preset 2x2x2 --no-build \
#     --file build/wd/scx_idlesteal.cur:/usr/bin/scx_idlesteal.cur \
#     --file build/wd/scx_idlesteal.split:/usr/bin/scx_idlesteal.split \
#     --script results/scx/wake-clock/exp15.sh --timeout 1500
# Lines: "RES SCHED WORKLOAD ROUND VALUE" (wakelat: req/s, higher is
# better; hackbench: s).
wl() { wakelat -m 2 -w 4 -d 5 | sed -n 's/^RESULT .*"rps": *\([0-9.]*\).*/\1/p'; }
hb() { hackbench -g 4 -l 100 | awk '/^Time:/ {print $2}'; }
run() {   # SCHED COMMAND...
  s=$1; shift
  if [ $s != eevdf ]; then scx_start /tmp/$s.log scx_idlesteal.$s > /dev/null || fail "$s did not load"; fi
  "$@"
  if [ $s != eevdf ]; then scx_stop > /dev/null || fail "$s did not unload"; fi
}
one() { echo "RES $1-wl wakelat $2 $(wl)"; echo "RES $1-hb hackbench-4 $2 $(hb)"; }
set -- eevdf cur split
for r in 1 2 3 4 5 6; do
  for s in "$@"; do run $s one $s $r; done
  first=$1; shift; set -- "$@" $first
done
echo "state $(cat /sys/kernel/sched_ext/state)"
