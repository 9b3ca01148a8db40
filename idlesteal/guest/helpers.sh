# idlesteal helper functions, sourced before /run.sh.
# section NAME: the following output belongs to section NAME.
section() { echo "@@SECTION $1@@"; }
# fail MSG: print MSG and exit non-zero.
fail() { echo "idlesteal: FAIL: $*"; exit 1; }
# schedsnap: /proc/schedstat, then each CPU's task-stealing state from the
# scheduler's debugfs (kernels without the series have none of those lines).
schedsnap() {
    cat /proc/schedstat
    grep -E '^cpu#|^  \.(avg_idle|max_idle_balance_cost|avg_steal_cost|steal_tasks|steal_failed|steal_search_ns) +:' \
        /sys/kernel/debug/sched/debug
    return 0
}
# set_features WORD...: write each word to sched/features, then verify.
set_features() {
    for f in "$@"; do
        echo "$f" > /sys/kernel/debug/sched/features || fail "cannot set sched feature $f"
    done
    for f in "$@"; do
        grep -qw "$f" /sys/kernel/debug/sched/features || fail "feature $f did not stick"
    done
}
# sched_ext (docs/scx.md).  scx_wait STATE: wait up to 30 s for
# /sys/kernel/sched_ext/state to read STATE.
scx_wait() {
    _i=0
    while [ "$(cat /sys/kernel/sched_ext/state 2>/dev/null)" != "$1" ]; do
        _i=$((_i + 1))
        [ $_i -lt 300 ] || { echo "timeout waiting for sched_ext state $1"; return 1; }
        sleep 0.1
    done
}
# scx_start LOG PROGRAM ARGS...: start a sched_ext loader in the background
# (its pid in $scx_pid), wait until it is in charge, print "ops NAME".
scx_start() {
    _log=$1; shift
    "$@" > "$_log" 2>&1 &
    scx_pid=$!
    scx_wait enabled || { tail -n 20 "$_log"; return 1; }
    echo "ops $(cat /sys/kernel/sched_ext/root/ops)"
}
# scx_stop: SIGINT to the loader, wait for it to exit, print "rc N", wait
# for sched_ext to give the tasks back, print "state disabled".
scx_stop() {
    kill -INT "$scx_pid"
    _rc=0; wait "$scx_pid" || _rc=$?
    echo "rc $_rc"
    scx_wait disabled || return 1
    echo "state $(cat /sys/kernel/sched_ext/state)"
}
