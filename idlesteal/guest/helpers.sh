# idlesteal helper functions, sourced before /run.sh.
# section NAME: the following output belongs to section NAME.
section() { echo "@@SECTION $1@@"; }
# fail MSG: print MSG and exit non-zero.
fail() { echo "idlesteal: FAIL: $*"; exit 1; }
# schedsnap: /proc/schedstat, then each CPU's task-stealing state from the
# scheduler's debugfs (kernels without the series have none of those lines),
# with the measurement patch's why counters (ni_*, steal_gated, steal_fail_*).
# /proc/schedstat version 16 (6.12) names no domain: the names follow, from
# sched/domains, as "domname CPU LEVEL NAME" lines (idlesteal/measure/schedstat.py).
# 6.12 shows sched/domains only while sched/verbose is on: switched on for
# the read and back off (which removes the directory again).
schedsnap() {
    cat /proc/schedstat
    if [ "$(head -n 1 /proc/schedstat)" = "version 16" ]; then
        _v=$(cat /sys/kernel/debug/sched/verbose 2>/dev/null)
        [ "$_v" = Y ] || echo Y > /sys/kernel/debug/sched/verbose 2>/dev/null
        for f in /sys/kernel/debug/sched/domains/cpu*/domain*/name; do
            [ -r "$f" ] || continue
            d=${f%/name}
            c=${d%/domain*}
            echo "domname ${c##*/cpu} ${d##*/domain} $(cat "$f")"
        done
        [ "$_v" = Y ] || echo N > /sys/kernel/debug/sched/verbose 2>/dev/null
    fi
    grep -E '^cpu#|^  \.(avg_idle|max_idle_balance_cost|avg_steal_cost|steal_tasks|steal_failed|steal_search_ns|steal_kicks_sent|steal_kicks|steal_kick_tasks|steal_gated|steal_fail_[a-z]+|ni_[a-z_]+) +:' \
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
# hang_report: what the tasks of a hung guest are doing, on stdout, every
# line prefixed "idlesteal-hang:": sched_ext's state; the threads of the
# sched_ext loaders (scx_*) and those in uninterruptible sleep (D), then
# those runnable (R), each with its CPU and kernel stack; each CPU's
# runqueue counters from sched/debug.  init.sh runs it as a SCHED_FIFO task
# (workloads/rtrun.c) shortly before the harness's timeout, so that it runs
# even when no fair or sched_ext task is scheduled any more (docs/tcg.md,
# "A script that hangs"); vm.py copies it from the console.
hang_report() {
    echo "idlesteal-hang: report at $(cut -d' ' -f1 /proc/uptime) s uptime," \
         "sched_ext $(cat /sys/kernel/sched_ext/state 2>/dev/null || echo absent)" \
         "$(cat /sys/kernel/sched_ext/root/ops 2>/dev/null)"
    _hang_tasks 'D:*|*:scx_*'
    _hang_tasks 'R:*'
    grep -E '^cpu#|^  \.(nr_running|nr_switches|curr->pid|clock) ' \
        /sys/kernel/debug/sched/debug 2>/dev/null | sed 's/^/idlesteal-hang: /'
    echo "idlesteal-hang: end"
}
# _hang_tasks PATTERN: the threads whose "STATE:PROCESS-NAME" matches the
# case PATTERN, each with its CPU and kernel stack.
_hang_tasks() {
    _pat=$1
    for _t in /proc/[0-9]*/task/[0-9]*; do
        read -r _s < $_t/stat 2>/dev/null || continue
        _c=${_s#*\(}; _c=${_c%\)*}
        _p=${_t#/proc/}; _p=${_p%%/*}
        read -r _pc < /proc/$_p/comm 2>/dev/null || _pc=
        set -- ${_s##*) }
        eval "case \"\$1:\$_pc\" in $_pat) ;; *) continue ;; esac"
        echo "idlesteal-hang: task ${_t##*/} ($_c) of $_p ($_pc) state $1 cpu ${37}"
        sed 's/^/idlesteal-hang:     /' $_t/stack 2>/dev/null
    done
}
# sched_ext (docs/scx.md).  scx_wait STATE: wait up to SCX_WAIT_S (60) s
# for /sys/kernel/sched_ext/state to read STATE.  Loading scx_lavd (its BPF
# verified under TCG) took 13 s on a quiet host and over 30 s beside a
# benchmark.
scx_wait() {
    _i=0
    while [ "$(cat /sys/kernel/sched_ext/state 2>/dev/null)" != "$1" ]; do
        _i=$((_i + 1))
        [ $_i -lt $((${SCX_WAIT_S:-60} * 10)) ] || { echo "timeout waiting for sched_ext state $1"; return 1; }
        sleep 0.1
    done
}
# _scx_alive PID: the process is there and not a zombie (`kill -0` is true
# for a child that exited until it is waited for).
_scx_alive() {
    { read -r _s < /proc/$1/stat; } 2>/dev/null || return 1
    set -- ${_s##*) }
    [ "$1" != Z ]
}
# scx_start LOG PROGRAM ARGS...: start a sched_ext loader in the background
# (its pid in $scx_pid), wait until it is in charge, print "ops NAME".
scx_start() {
    scx_log=$1; shift
    "$@" > "$scx_log" 2>&1 &
    scx_pid=$!
    scx_wait enabled || { tail -n 20 "$scx_log"; return 1; }
    echo "ops $(cat /sys/kernel/sched_ext/root/ops)"
}
# scx_stop: SIGINT to the loader, wait for it to exit, print "rc N", wait
# for sched_ext to give the tasks back, print "state disabled".  A loader
# that is still there after SCX_STOP_S (60) seconds is reported instead
# (sched_ext's state, each of its threads' state and kernel stack, the
# last lines it printed) and
# left running: return 1, so that the script goes on to say so rather
# than wait for it until the harness's timeout.
scx_stop() {
    kill -INT "$scx_pid"
    _i=0
    while _scx_alive "$scx_pid"; do
        _i=$((_i + 1))
        if [ $_i -gt $((${SCX_STOP_S:-60} * 10)) ]; then
            echo "loader $scx_pid still running ${SCX_STOP_S:-60} s after SIGINT," \
                 "sched_ext $(cat /sys/kernel/sched_ext/state 2>/dev/null)"
            for _t in /proc/$scx_pid/task/*; do
                read -r _s < $_t/stat 2>/dev/null || continue
                set -- ${_s##*) }
                echo "  thread ${_t##*/} state $1 cpu ${37} wchan $(cat $_t/wchan 2>/dev/null)"
                sed 's/^/    /' $_t/stack 2>/dev/null
            done
            echo "  its last lines ($scx_log):"
            tail -n 5 "$scx_log" 2>/dev/null | sed 's/^/    /'
            return 1
        fi
        sleep 0.1
    done
    _rc=0; wait "$scx_pid" || _rc=$?
    echo "rc $_rc"
    scx_wait disabled || return 1
    echo "state $(cat /sys/kernel/sched_ext/state)"
}
# Scheduler event tracing for the wasted-CPU-time measure (idlesteal/measure/tracerun.py,
# docs/waste.md).  trace_setup KB: tracefs mounted, KB per-CPU ring buffer,
# the mono clock (one clocksource for all CPUs, so lines of different CPUs
# merge in causal order; under TCG the kernel marks the TSC unstable and the
# "global" clock clamps lagging CPUs to the latest stamp, 381 of 18k events
# out of order in a hackbench run, 0 with mono), new
# events dropped rather than old ones overwritten when a buffer is full
# (per_cpu/cpuN/stats counts them: the run fails), the measure's events on,
# tracing off until trace_on.  Host mode points IDLESTEAL_TRACEFS at a
# tracefs instance of its own (idlesteal/runs/host/lock.py makes it).
TRACEFS=${IDLESTEAL_TRACEFS:-/sys/kernel/tracing}
trace_setup() {
    [ -f $TRACEFS/trace ] || mount -t tracefs tracefs $TRACEFS 2>/dev/null ||
        fail "no tracefs: this kernel has no event tracing (configs/trace.config)"
    echo 0 > $TRACEFS/tracing_on
    echo "$1" > $TRACEFS/buffer_size_kb || fail "cannot set trace buffer_size_kb to $1"
    echo mono > $TRACEFS/trace_clock || fail "no mono trace clock"
    echo 0 > $TRACEFS/options/overwrite || fail "cannot turn trace overwrite off"
    for _e in sched_switch sched_waking sched_wakeup sched_wakeup_new sched_migrate_task \
              sched_process_exit; do
        echo 1 > $TRACEFS/events/sched/$_e/enable || fail "no trace event sched/$_e"
    done
}
# trace_on: empty the buffers, start tracing, mark the window's start.
trace_on() {
    echo > $TRACEFS/trace
    echo 1 > $TRACEFS/tracing_on
    echo "idlesteal window start" > $TRACEFS/trace_marker
}
# trace_off: mark the window's end, stop tracing.
trace_off() {
    echo "idlesteal window end" > $TRACEFS/trace_marker
    echo 0 > $TRACEFS/tracing_on
}
# trace_dump TAG: sections TAG.trace_stats (each CPU's ring-buffer stats,
# overruns and drops) and TAG.trace (the trace text, gzip, base64: the
# serial line moves ~0.4 MB/s).  gzip reads a pipe: GNU gzip (host mode)
# warns "file size changed while zipping" on a tracefs file, or on it as
# stdin, into the section.
trace_dump() {
    section "$1.trace_stats"
    head -n 100 $TRACEFS/per_cpu/cpu*/stats
    section "$1.trace"
    cat $TRACEFS/trace | gzip -c | base64
}
# lock_stat (CONFIG_LOCK_STAT; idlesteal/measure/lockstat.py, `bench --lock-stat`).
# lockstat_reset: statistics on, every class's counters and points cleared,
# the time noted for lockstat_window.
lockstat_reset() {
    [ -w /proc/lock_stat ] ||
        fail "no /proc/lock_stat: this kernel has no CONFIG_LOCK_STAT (configs/lockstat.config)"
    echo 1 > /proc/sys/kernel/lock_stat || fail "cannot turn lock_stat on"
    echo 0 > /proc/lock_stat || fail "cannot clear /proc/lock_stat"
    lockstat_t0=$(cut -d' ' -f1 /proc/uptime)
}
# lockstat_window: "T0 T1", /proc/uptime (s) at the last lockstat_reset and
# now.  Not /proc/stat's ticks: under TCG on a loaded host the guest accounts
# a fraction of the ticks (about 1 s of 6-23 s of hackbench), its clock does not.
lockstat_window() {
    echo "$lockstat_t0 $(cut -d' ' -f1 /proc/uptime)"
}
# lockstat_snap [NAME]: /proc/lock_stat's header and the blocks of the classes
# NAME and NAME/N (subclasses); all of them without NAME.  A class line is the
# one whose 13th field from the end is the name with its ':' (12 numbers follow).
lockstat_snap() {
    awk -v want="${1:-}" -v head=1 '
        NF >= 13 && $(NF - 12) ~ /:$/ {
            n = $(NF - 12); sub(/(-[WR])?:$/, "", n)
            keep = want == "" || n == want || index(n, want "/") == 1; head = 0
        }
        head || keep { print }' /proc/lock_stat
}
