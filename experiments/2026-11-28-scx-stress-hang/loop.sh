# Unload under load with CPUs offline, in a loop: the step at which the CI
# run hung (scx_stop with CPUs 4 and 7 offline, message passing running).
#   python3 -m idlesteal boot --variant scx --preset 2x2x2 --no-build --tools perf \
#     --file build/wd/scx_idlesteal.X:/usr/bin/scx_idlesteal.X \
#     --script results/scx/stress-hang-2026-11-28/loop.sh --timeout 1500
# LOADER (default scx_idlesteal) and ROUNDS come from the environment line below.
LOADER=${LOADER:-scx_idlesteal}
ROUNDS=${ROUNDS:-40}
N=$(nproc --all)
onl() { echo $2 > /sys/devices/system/cpu/cpu$1/online 2>/dev/null; }
r=1
while [ $r -le $ROUNDS ]; do
  scx_start /tmp/l.log $LOADER > /dev/null || fail "round $r: $LOADER did not load"
  hackbench -p -g 4 -l 400 > /dev/null 2>&1 & h1=$!
  hackbench -g 2 -l 400 > /dev/null 2>&1 & h2=$!
  # churn: 6 changes, at most 2 CPUs offline, never cpu0
  a=$(( RANDOM % (N - 1) + 1 )); b=$(( RANDOM % (N - 1) + 1 ))
  onl $a 0; sleep 0.3; onl $b 0; sleep 0.3; onl $a 1; sleep 0.3
  a=$(( RANDOM % (N - 1) + 1 )); onl $a 0; sleep 0.3
  echo "round $r offline at stop: $(cat /sys/devices/system/cpu/offline)"
  scx_stop > /tmp/stop.txt || { cat /tmp/stop.txt; fail "round $r: did not unload"; }
  echo "round $r $(tr '\n' ' ' < /tmp/stop.txt)"
  for c in $(seq 1 $((N - 1))); do onl $c 1; done
  wait $h1; wait $h2
  r=$((r + 1))
done
echo "loop done $ROUNDS rounds"
