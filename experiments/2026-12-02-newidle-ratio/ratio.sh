# NI_RANDOM's newidle_ratio of every domain, STEAL off and on alternating in
# one boot (the measurement patch shows the ratio).  The ratio moves once a
# domain has seen 1024 newidle calls, so each phase is 20 s of a load that
# goes idle often: a sleep loop on each CPU and short hackbench runs.
echo 1 > /sys/kernel/debug/sched/verbose
ratio() {
    for f in /sys/kernel/debug/sched/domains/cpu*/domain*/newidle_ratio; do
        d=${f%/newidle_ratio}
        echo "$(basename $(dirname $d)) $(cat $d/name) $(cat $f)"
    done
}
for c in 0 1 2 3 4 5 6 7; do
    taskset -c $c sh -c 'while :; do usleep 500; done' &
done
for r in 0 1; do
    for feat in NO_STEAL STEAL; do
        echo $feat > /sys/kernel/debug/sched/features
        end=$(($(date +%s) + 20))
        while [ $(date +%s) -lt $end ]; do hackbench -g 1 -l 50 > /dev/null; done
        section ratio.$feat.r$r
        ratio
        grep -E 'steal_tasks' /sys/kernel/debug/sched/debug | awk '{s += $NF} END {print "steal_tasks", s}'
    done
done
