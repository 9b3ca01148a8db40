# sched/domains/ is only populated with sched_verbose on.
echo 1 > /sys/kernel/debug/sched/verbose
for d in /sys/devices/system/cpu/cpu[0-9]*; do
    n=${d##*/cpu}
    echo "cpu $n smt=$(cat $d/topology/thread_siblings_list 2>/dev/null || echo -)" \
         "cap=$(cat $d/cpu_capacity 2>/dev/null || echo -)"
    for s in /sys/kernel/debug/sched/domains/cpu$n/domain*; do
        [ -d "$s" ] && echo "sd $n ${s##*/domain} $(cat $s/name) $(cat $s/flags)"
    done
done
echo "online $(cat /sys/devices/system/cpu/online)"
