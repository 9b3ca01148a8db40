# CPU 3 offline (its idle bit left set); CPU 2 busy with a pinned spinner;
# a task allowed on CPUs 2-3 sleeping 10 ms in a loop: its wakeups find no
# idle CPU of its mask but the offline one.
for L in scx_idlesteal.old scx_idlesteal; do
  section $L
  scx_start /tmp/$L.log $L
  taskset 4 sh -c 'while :; do :; done' & s=$!
  echo 0 > /sys/devices/system/cpu/cpu3/online && echo "cpu3 offline"
  sleep 1
  taskset c sh -c 'i=0; while [ $i -lt 100 ]; do sleep 0.01; i=$((i+1)); done' &
  w=$!
  (while :; do hackbench -g 2 -l 50 >/dev/null; done) & hb=$!
  wait $w
  kill $hb $s; wait $hb $s 2>/dev/null
  while pidof hackbench >/dev/null; do sleep 0.5; done
  echo 1 > /sys/devices/system/cpu/cpu3/online
  for c in 4 6; do echo 0 > /sys/devices/system/cpu/cpu$c/online; hackbench -g 4 -l 100 > /dev/null; echo 1 > /sys/devices/system/cpu/cpu$c/online; done
  scx_stop
  grep -E "^final|EXIT" /tmp/$L.log | tr ' ' '\n' | grep -E "offline_idle|remote_idle|fallback|kicks|EXIT" | tr '\n' ' '; echo
done
