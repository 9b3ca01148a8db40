# 2x2x2: EEVDF and scx_idlesteal alternated, ROUNDS rounds, untraced, on
# the cells scx_idlesteal loses (8 pipe pairs of 5000 loops, sysbench
# threads 8 of 1000 events) and one it wins (hackbench 1 group); the
# clocksource printed first.  Booted twice, as is (the guest finds its
# TSCs unsynchronized and reads the HPET) and with the TSC forced:
#   python3 -m idlesteal boot --variant scx --preset 2x2x2 --no-build \
#     --tools perf,sysbench [--append "tsc=reliable"] \
#     --file build/scx-scx/build/bin/scx_idlesteal:/usr/bin/scx_idlesteal \
#     --script results/scx/clocksource/cmp.sh --timeout 1500
ROUNDS=${ROUNDS:-6}
echo "CLOCKSOURCE $(cat /sys/devices/system/clocksource/clocksource0/current_clocksource)"
pipe8() {
  p=
  for i in 1 2 3 4 5 6 7 8; do perf bench sched pipe -l 5000 > /tmp/pp.$i & p="$p $!"; done
  for j in $p; do wait $j; done
  cat /tmp/pp.[1-8] | awk '/usecs\/op/ { s += $1; n++ } END { printf "%.3f %d\n", s / n, n }'
}
sbt() { sysbench threads --threads=8 --events=1000 --time=0 run | awk '/total time:/ { sub("s", "", $3); print $3 }'; }
hb() { hackbench -g 1 -l 100 | awk '/^Time:/ { print $2 }'; }
one() {
  echo "RUN $1 pipe8 $2 $(pipe8)"
  echo "RUN $1 sbt8 $2 $(sbt)"
  echo "RUN $1 hb1 $2 $(hb)"
}
r=1
while [ $r -le $ROUNDS ]; do
  one eevdf $r
  scx_start /tmp/c.log scx_idlesteal -q > /dev/null || fail "did not load"
  one scx_idlesteal $r
  scx_stop > /dev/null || fail "did not unload"
  r=$((r + 1))
done
grep -E '^final' /tmp/c.log
echo "CLOCKSOURCE $(cat /sys/devices/system/clocksource/clocksource0/current_clocksource)"
