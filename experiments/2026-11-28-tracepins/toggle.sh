# Toggle the sched_wakeup event (each toggle re-patches its static call
# unless two probes are pinned) while hackbench keeps every vCPU waking.
mount -t tracefs tracefs /sys/kernel/tracing 2>/dev/null
T=/sys/kernel/tracing
echo 0 > $T/tracing_on
ls $T/instances
for e in sched_switch sched_wakeup; do echo "$e: $(cat $T/events/sched/$e/enable)"; done
(while :; do hackbench -g 4 -l 200 >/dev/null 2>&1; done) &
hb=$!
i=0
start=$(date +%s)
while [ $(( $(date +%s) - start )) -lt ${TOGGLE_S:-120} ]; do
    echo 1 > $T/events/sched/sched_wakeup/enable
    echo 0 > $T/events/sched/sched_wakeup/enable
    i=$((i+1))
done
kill $hb
echo "toggles $i"
