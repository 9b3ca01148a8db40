# One 2x2x2 boot of the scx kernel: hackbench -g 4 -l 100 under five
# schedulers, 6 rounds, the order rotated every round.  Output lines:
# "R <round> <scheduler> <seconds>".  Run by measure.py.
F=/sys/kernel/debug/sched/features
wait_state() { while [ "$(cat /sys/kernel/sched_ext/state)" != "$1" ]; do sleep 0.1; done; }
run_one() {
    case $1 in
    eevdf)        echo NO_STEAL > $F ;;
    eevdf+steal)  echo STEAL > $F ;;
    scx_idlesteal) echo NO_STEAL > $F; scx_idlesteal > /dev/null 2>&1 & pid=$!; wait_state enabled ;;
    scx_idlesteal-off) echo NO_STEAL > $F; scx_idlesteal -o > /dev/null 2>&1 & pid=$!; wait_state enabled ;;
    scx_simple)   echo NO_STEAL > $F; scx_simple > /dev/null 2>&1 & pid=$!; wait_state enabled ;;
    esac
    t=$(hackbench -g 4 -l 100 | sed -n 's/^Time: //p')
    case $1 in scx_*) kill -INT $pid; wait $pid; wait_state disabled ;; esac
    echo "R $2 $1 $t"
}
set -- eevdf eevdf+steal scx_idlesteal scx_idlesteal-off scx_simple
hackbench -g 4 -l 100 > /dev/null   # warm-up, discarded
for round in 1 2 3 4 5 6; do
    for s in "$@"; do run_one $s $round; done
    first=$1; shift; set -- "$@" $first   # rotate the order
done
echo STEAL > $F
