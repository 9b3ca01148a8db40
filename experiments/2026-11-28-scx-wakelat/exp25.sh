# 1x1x2 wakelat (1 messenger, 4 workers, 50 us of work, 5 s; what
# `make bench-scx` runs there, 0.84x EEVDF's requests in the bench of
# 7d1a854): EEVDF against the loader ("cur", the work tree at eea10e4) as
# it is and with one switch each: -p (no wakeup preemption), -f (fixed
# slices), -k (no arrival kick).  8 rounds rotated, one 1x1x2 boot.
#   python3 results/scx/wake-clock/mkvar.py cur -
#   python3 -m idlesteal boot --variant scx --preset 1x1x2 --no-build \
#     --file build/wd/scx_idlesteal.cur:/usr/bin/scx_idlesteal.cur \
#     --file results/scx/wake-clock/lib.sh:/usr/local/lib/wake-clock.sh \
#     --script results/scx/wakelat/exp25.sh --timeout 1500
# Lines: "RES SCHED wakelat ROUND REQ/S", "LAT SCHED ROUND {RESULT json}",
# "LOG SCHED stats ..." (the loader's totals).
. /usr/local/lib/wake-clock.sh
for v in nop:-p fix:-f nok:-k; do
  printf '#!/bin/sh\nexec scx_idlesteal.cur %s "$@"\n' ${v#*:} > /usr/bin/scx_idlesteal.${v%%:*}
  chmod +x /usr/bin/scx_idlesteal.${v%%:*}
done
wl1() {
  wakelat -m 1 -w 4 -d 5 > /tmp/wl.txt
  echo "RES $1 wakelat $2 $(sed -n 's/^RESULT .*"rps": *\([0-9.]*\).*/\1/p' /tmp/wl.txt)"
  echo "LAT $1 $2 $(sed -n 's/^RESULT //p' /tmp/wl.txt)"
}
rotate 8 wl1 eevdf cur nop fix nok
echo "state $(cat /sys/kernel/sched_ext/state)"
