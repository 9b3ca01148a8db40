# Cost of the two pinned probes: hackbench with the measure's events on
# (top level tracing on, as a measured run) and off, pinned (two boot
# instances with the events on, tracing off) or not, interleaved in one boot.
mount -t tracefs tracefs /sys/kernel/tracing 2>/dev/null
T=/sys/kernel/tracing
EV="sched_switch sched_waking sched_wakeup sched_wakeup_new sched_migrate_task sched_process_exit"
echo 0 > $T/tracing_on; echo 8192 > $T/buffer_size_kb; echo mono > $T/trace_clock
pins() {  # pins on|off
    for p in idlesteal_pin_a idlesteal_pin_b; do
        if [ $1 = on ]; then
            mkdir -p $T/instances/$p; echo 0 > $T/instances/$p/tracing_on
            for e in $EV; do echo 1 > $T/instances/$p/events/sched/$e/enable; done
        else
            rmdir $T/instances/$p
        fi
    done
}
top() { for e in $EV; do echo $1 > $T/events/sched/$e/enable; done; echo $1 > $T/tracing_on; }
run() {  # label
    echo > $T/trace
    s=$(cut -d' ' -f1 /proc/uptime)
    hackbench -g 4 -l 400 > /dev/null
    e=$(cut -d' ' -f1 /proc/uptime)
    echo "R $1 $(echo "$e $s" | awk '{printf "%.3f", $1-$2}')"
}
pins off   # the cmdline ones
for r in 1 2 3 4 5 6; do
    for st in on off; do
        [ $((r % 2)) = 0 ] && { [ $st = on ] && st=off || st=on; }
        pins $st
        top 1; run "trace-pins-$st"; top 0
        run "notrace-pins-$st"
        [ $st = on ] && pins off
    done
done
echo done
