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
