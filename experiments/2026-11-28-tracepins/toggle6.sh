# Toggle the six events of the waste measure, one loop each, while
# hackbench keeps every vCPU waking; count the toggles.
mount -t tracefs tracefs /sys/kernel/tracing 2>/dev/null
T=/sys/kernel/tracing
echo 0 > $T/tracing_on
echo "instances: $(ls $T/instances)"; for i in $T/instances/*; do echo "$i on=$(cat $i/tracing_on) kb=$(cat $i/buffer_size_kb) $(cat $i/events/sched/sched_wakeup/enable)"; done; cat /proc/cmdline; dmesg | grep -i "tracing\|instance" | head
(while :; do hackbench -g 4 -l 200 >/dev/null 2>&1; done) &
hb=$!
pids=""
for e in sched_switch sched_waking sched_wakeup sched_wakeup_new sched_migrate_task sched_process_exit; do
    echo "$e: $(cat $T/events/sched/$e/enable)"
    ( n=0; start=$(date +%s)
      while [ $(( $(date +%s) - start )) -lt ${TOGGLE_S:-300} ]; do
          echo 1 > $T/events/sched/$e/enable; echo 0 > $T/events/sched/$e/enable; n=$((n+1))
      done; echo "$e toggles $n" ) &
    pids="$pids $!"
done
for p in $pids; do wait $p; done
kill $hb
