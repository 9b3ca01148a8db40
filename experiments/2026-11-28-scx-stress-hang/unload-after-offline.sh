# Unload right after a CPU offline completes, under message passing, many rounds in one boot.
N=$(nproc --all)
onl() { echo $2 > /sys/devices/system/cpu/cpu$1/online 2>/dev/null; }
r=1
ROUNDS=${ROUNDS:-50}
while [ $r -le $ROUNDS ]; do
  scx_start /tmp/l.log scx_idlesteal > /dev/null || { echo "round $r: did not load"; tail -5 /tmp/l.log; break; }
  hackbench -p -g 4 -l 300 > /dev/null 2>&1 & h1=$!
  hackbench -g 2 -l 300 --threads > /dev/null 2>&1 & h2=$!
  sleep 0.$((RANDOM % 9 + 1))
  a=$(( RANDOM % (N - 1) + 1 )); onl $a 0
  b=$(( RANDOM % (N - 1) + 1 )); onl $b 0 &
  sleep 0.0$((RANDOM % 9))
  SCX_STOP_S=40 scx_stop > /tmp/stop.txt || { cat /tmp/stop.txt; echo "round $r: did not unload"; break; }
  wait
  echo "round $r off $(cat /sys/devices/system/cpu/offline) $(tr '\n' ' ' < /tmp/stop.txt)"
  for c in $(seq 1 $((N - 1))); do onl $c 1; done
  r=$((r + 1))
done
echo "loop done $r"
