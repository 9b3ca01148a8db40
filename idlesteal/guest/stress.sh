# idlesteal stress script (idlesteal/runs/stress/); busybox ash.
#
# Not run on its own: stress.script() puts a generated preamble in front of
# this file (the guest's /run.sh is preamble + this file).  The preamble
# sets the run's parameters as shell variables (the list below; each is
# checked here) and defines two functions:
#   guest_topology    print the topology lines (guest/topology.sh)
#   overload_settled  print overload_cpus once no CPU is marked in it
# section and fail come from guest/helpers.sh (sourced by /init).
: "${N:?}" "${DURATION:?}" "${FEAT:?}" "${OVERLOAD:?}" "${THROTTLE_MAX:?}" \
  "${HACKBENCH:?}" "${MSGCOUNT:?}" "${MSGCOUNT_EXPECT:?}" "${THR_MSGCOUNT:?}" \
  "${THR_MSGCOUNT_EXPECT:?}" "${THR_HACKBENCH:?}" "${PART_HACKBENCH:?}" \
  "${AFFINITY:?}" "${AFFINITY_RUN:?}" "${WAKELAT:?}" "${LOW_CPUS:?}" \
  "${HOTPLUG_SLEEP:?}" "${PART_SLEEP:?}" "${PART_GAP:?}" "${PART_CHOICES:?}" \
  "${MAXOFF:?}" "${MAXMASK:?}" "${MC_TIMEOUT:?}" "${WORKERS:?}"
# SCX: a sched_ext loader's command line, in charge during the load ("": EEVDF).
: "${SCX?}"
# STEAL_MODE: "toggle" (STEAL on 3/4 of the time) or "off" (NO_STEAL throughout).
: "${STEAL_MODE:?}"
# TRACE_BUFFER_KB: trace ring buffer per CPU; TRACE_EXCERPT: lines kept of it.
: "${TRACE_BUFFER_KB:?}" "${TRACE_EXCERPT:?}"
# SERIES: 1 the kernel has the series (overload_cpus, the STEAL feature, the
# steal counters: each must be there); 0 it was built without it (a %base
# variant, decided on the host): those checks are off and none of the three
# may be there.
: "${SERIES:?}"
case "$STEAL_MODE" in toggle|off) ;; *) fail "STEAL_MODE must be toggle or off";; esac
case "$SERIES" in 0|1) ;; *) fail "SERIES must be 0 or 1";; esac
D=/tmp/stress
CG=/sys/fs/cgroup
mkdir -p $D
now() { date +%s; }
# klog MESSAGE: a line on the console (KERN_INFO), beside the kernel's own
# hotplug lines, so that a console has the partition steps in order.
klog() { [ ! -w /dev/kmsg ] || echo "<6>stress: $*" > /dev/kmsg 2>/dev/null; }

section meta
uname -r
section topology
guest_topology
section features_before
cat $FEAT
section series
# What the kernel has of the series, against what the host said it has.
has_overload=0; has_steal=0
[ -f $OVERLOAD ] && has_overload=1
grep -qwE 'STEAL|NO_STEAL' $FEAT && has_steal=1
# STEAL_KICK (patches/separate/, in the tree) is toggled too where the kernel
# has it and stealing is being toggled.
has_kick=0
[ $STEAL_MODE = toggle ] && grep -qwE 'STEAL_KICK|NO_STEAL_KICK' $FEAT && has_kick=1
echo "series=$SERIES overload_cpus=$has_overload steal_feature=$has_steal"
if [ $SERIES = 1 ]; then
    [ $has_overload = 1 ] || fail "no $OVERLOAD on a kernel said to have the series"
    [ $has_steal = 1 ] || fail "no STEAL in $FEAT on a kernel said to have the series"
else
    [ $has_overload = 0 ] && [ $has_steal = 0 ] || \
        fail "overload_cpus=$has_overload steal_feature=$has_steal on a kernel said to be without the series"
fi
section overload_before
[ $SERIES = 0 ] || cat $OVERLOAD

# Log every sched-domain attachment (KERN_DEBUG: ring buffer only).
echo Y > /sys/kernel/debug/sched/verbose || fail "cannot enable sched/verbose"
dmesg -c > /dev/null
echo "+cpu +cpuset" > $CG/cgroup.subtree_control || fail "cannot enable cpu/cpuset controllers"
mkdir $CG/thr || fail "cannot create the throttled cgroup"
echo "$THROTTLE_MAX" > $CG/thr/cpu.max || fail "cannot set cpu.max"

# ---- tracing (a kernel with event tracing, e.g. configs/debug.config):
# every move of an affinity_check thread (sched_migrate_task, with the
# kernel stack that made it), where those threads run (sched_switch), CPU
# hotplug steps and cpuset partition changes (markers).  affinity_check
# marks its mask changes and stops tracing at the first violation, so the
# ring buffer keeps what led to it (section affinity_trace below).
T=/sys/kernel/tracing
TRACE=""
mark() { [ -z "$TRACE" ] || echo "stress: $*" > $T/trace_marker 2>/dev/null; }
section trace_setup
if [ -d $T ] && { [ -f $T/trace ] || mount -t tracefs tracefs $T 2>/dev/null; } && \
        [ -d $T/events/sched/sched_migrate_task ]; then
    echo 0 > $T/tracing_on
    echo $TRACE_BUFFER_KB > $T/buffer_size_kb || fail "cannot size the trace buffer"
    echo > $T/trace
    ev=$T/events/sched
    echo 'comm == "affinity_check"' > $ev/sched_migrate_task/filter || fail "migrate filter"
    echo 'stacktrace if comm == "affinity_check"' > $ev/sched_migrate_task/trigger \
        || fail "cannot set the stacktrace trigger"
    echo 'prev_comm == "affinity_check" || next_comm == "affinity_check"' \
        > $ev/sched_switch/filter || fail "switch filter"
    for e in sched/sched_migrate_task sched/sched_switch cpuhp/cpuhp_enter cpuhp/cpuhp_exit; do
        echo 1 > $T/events/$e/enable || fail "cannot enable $e"
    done
    echo 1 > $T/tracing_on
    TRACE="-T $T"
    echo "tracing on, $TRACE_BUFFER_KB KiB per CPU"
else
    echo "tracing off: no tracefs or no sched events in this kernel"
fi

section schedstat_before
schedsnap
if [ -n "$SCX" ]; then
    section scx_start
    scx_start $D/scx.log $SCX || fail "sched_ext loader $SCX did not load"
fi

END=$(( $(now) + $DURATION ))

# ---- message passing
w_hackbench() {  # NAME ARGS...
    name=$1; shift
    runs=0; fails=0
    while [ $(now) -lt $END ]; do
        case $((runs % 4)) in
            0) m="";; 1) m="--pipe";; 2) m="--threads";; 3) m="--pipe --threads";;
        esac
        if hackbench "$@" $m > $D/$name.out 2>&1; then
            runs=$((runs + 1))
        else
            fails=$((fails + 1))
            { echo "FAIL $name: hackbench $* $m"; tail -5 $D/$name.out; } >> $D/failures
        fi
    done
    echo "$name runs=$runs fails=$fails" > $D/$name.cnt
}

w_msgcount() {  # NAME EXPECTED ARGS...
    name=$1; expect=$2; shift 2
    runs=0; fails=0
    while [ $(now) -lt $END ]; do
        case $((runs % 4)) in
            0) m="";; 1) m="--pipe";; 2) m="--threads";; 3) m="--pipe --threads";;
        esac
        msgcount "$@" $m -T $MC_TIMEOUT > $D/$name.out 2>&1
        rc=$?
        echo "MSGCOUNT $name rc=$rc expect=$expect $(grep '^RESULT ' $D/$name.out | tail -1)" >> $D/$name.results
        runs=$((runs + 1))
        if [ $rc -ne 0 ]; then
            fails=$((fails + 1))
            { echo "FAIL $name rc=$rc: msgcount $* $m"; tail -5 $D/$name.out; } >> $D/failures
        fi
    done
    echo "$name runs=$runs fails=$fails" > $D/$name.cnt
}

# A run shorter than this is not started: under this churn on an
# over-committed host one request can wait 2.5 s (lat_max_us of whole runs),
# so a 2 s run at the end of the window completed no request and failed
# (no samples: exit 2) with nothing stalled (2node, 2026-11-25).
WAKELAT_MIN_RUN=10

w_wakelat() {
    runs=0; fails=0
    while :; do
        left=$(( END - $(now) ))
        [ $left -ge $WAKELAT_MIN_RUN ] || break
        [ $left -le $AFFINITY_RUN ] || left=$AFFINITY_RUN
        wakelat $WAKELAT -d $left > $D/wakelat.out 2>&1
        rc=$?
        echo "WAKELAT rc=$rc $(grep '^RESULT ' $D/wakelat.out | tail -1)" >> $D/wakelat.results
        runs=$((runs + 1))
        if [ $rc -ne 0 ]; then
            fails=$((fails + 1))
            { echo "FAIL wakelat rc=$rc"; tail -3 $D/wakelat.out; } >> $D/failures
            # what each unanswered worker was doing when the stall was seen
            grep '^STALL worker' $D/wakelat.out | head -32 >> $D/wakelat.results
        fi
    done
    echo "wakelat runs=$runs fails=$fails" > $D/wakelat.cnt
}

# ---- throttled cgroup: part of the load plus a busy loop
w_busy() {
    loops=0
    while [ $(now) -lt $END ]; do
        i=0
        while [ $i -lt 200 ]; do i=$((i + 1)); done
        loops=$((loops + 1))
    done
    echo "thr_busy loops=$loops" > $D/thr_busy.cnt
}

# Background subshells inherit the RNG state: seed each worker differently.
# ($RANDOM must be read in the worker's own shell, not inside $(...).)
seed() { RANDOM=$(( $(now) * 7 + $1 )); }
# The control loops run at nice -10: among ~80 message-passing tasks at
# nice 0 they would otherwise get a turn only every few seconds.
boost() {
    read mypid rest < /proc/self/stat
    renice -n -10 -p $mypid > /dev/null 2>&1
}

# ---- CPU hotplug churn (never cpu0; at most $MAXOFF CPUs offline)
w_hotplug() {
    boost; seed 1
    off=0; on=0; fail=0; noff=0
    while [ $(now) -lt $END ]; do
        c=$(( RANDOM % (N - 1) + 1 ))
        f=/sys/devices/system/cpu/cpu$c/online
        read state < $f
        if [ "$state" = 1 ]; then
            if [ $noff -lt $MAXOFF ]; then
                if echo 0 > $f 2>/dev/null; then
                    off=$((off + 1)); noff=$((noff + 1))
                else
                    fail=$((fail + 1))
                fi
            fi
        else
            if echo 1 > $f 2>/dev/null; then
                on=$((on + 1)); noff=$((noff - 1))
            else
                fail=$((fail + 1))
            fi
        fi
        sleep $HOTPLUG_SLEEP
    done
    echo "hotplug offline=$off online=$on fail=$fail" > $D/hotplug.cnt
}

# ---- cpuset partitions: create (domains rebuilt), load, destroy (rebuilt)
set -- $PART_CHOICES
NCHOICES=$#
pick_choice() {  # INDEX
    k=$1
    set -- $PART_CHOICES
    shift $k
    echo $1
}
rmdir_retry() {
    for t in 1 2 3 4 5 6 7 8 9 10; do
        rmdir $1 2>/dev/null && return 0
        sleep 0.2
    done
    return 1
}
w_partition() {
    boost; seed 2
    i=0; root=0; invalid=0; member=0; err=0; removed=0; hb=0; hbfail=0; nojoin=0
    while [ $(now) -lt $END ]; do
        i=$((i + 1))
        p=$CG/part$i
        mkdir $p || { err=$((err + 1)); sleep 1; continue; }
        r=$(( RANDOM % NCHOICES ))
        cpus=$(pick_choice $r)
        mark "partition $i cpus $cpus root"
        if echo $cpus > $p/cpuset.cpus 2>/dev/null && \
                echo root > $p/cpuset.cpus.partition 2>/dev/null; then
            read st < $p/cpuset.cpus.partition
            klog "partition $i cpus $cpus root: $st, online $(cat /sys/devices/system/cpu/online)"
            case "$st" in
                root) root=$((root + 1));;
                *) invalid=$((invalid + 1))
                   echo "partition $cpus: $st" >> $D/partition.invalid;;
            esac
        else
            err=$((err + 1))
        fi
        # Joining fails (ENOSPC) when hotplug took every CPU of the cpuset.
        (echo 0 > $p/cgroup.procs || exit 99; exec hackbench $PART_HACKBENCH) > $D/part.out 2>&1
        rc=$?
        if [ $rc = 0 ]; then
            hb=$((hb + 1))
        elif [ $rc = 99 ]; then
            nojoin=$((nojoin + 1))
        else
            hbfail=$((hbfail + 1))
            { echo "FAIL partition hackbench in $cpus rc=$rc"; tail -5 $D/part.out; } >> $D/failures
        fi
        sleep $PART_SLEEP
        read st < $p/cpuset.cpus.partition
        if [ "$st" != member ]; then
            if echo member > $p/cpuset.cpus.partition 2>/dev/null; then
                member=$((member + 1))
            else
                err=$((err + 1))
            fi
        fi
        mark "partition $i cpus $cpus remove"
        klog "partition $i cpus $cpus remove"
        if rmdir_retry $p; then removed=$((removed + 1)); else err=$((err + 1)); fi
        sleep $PART_GAP
    done
    echo "partition created=$i root=$root invalid=$invalid member=$member removed=$removed errors=$err hackbench=$hb hackbench_fails=$hbfail join_fails=$nojoin" > $D/partition.cnt
}

# ---- affinity churn
w_affinity() {
    runs=0; fails=0
    while :; do
        left=$(( END - $(now) ))
        [ $left -gt 0 ] || break
        [ $left -le $AFFINITY_RUN ] || left=$AFFINITY_RUN
        taskset -c $LOW_CPUS affinity_check $AFFINITY $TRACE -d $left > $D/affinity.out 2>&1
        rc=$?
        echo "AFFINITY rc=$rc $(grep '^RESULT ' $D/affinity.out | tail -1)" >> $D/affinity.results
        runs=$((runs + 1))
        if [ $rc -ne 0 ]; then
            fails=$((fails + 1))
            { echo "FAIL affinity_check rc=$rc"; grep VIOLATION $D/affinity.out | head -5; tail -3 $D/affinity.out; } >> $D/failures
        fi
    done
    echo "affinity runs=$runs fails=$fails" > $D/affinity.cnt
}
w_taskset() {
    boost; seed 3
    ok=0; fail=0
    while [ $(now) -lt $END ]; do
        k=0
        for pid in $(pidof hackbench msgcount); do
            k=$((k + 1))
            [ $k -le 6 ] || break
            m=$(( RANDOM % $MAXMASK + 1 ))
            mask=$(printf %x $m)
            # fails legitimately when the task exited meanwhile or the mask
            # holds only offline / other-cpuset CPUs
            if taskset -p $mask $pid > /dev/null 2>> $D/taskset.err; then ok=$((ok + 1)); else fail=$((fail + 1)); fi
        done
        sleep 0.3
    done
    echo "taskset ok=$ok fail=$fail" > $D/taskset.cnt
}

# ---- feature toggles (STEAL on 3/4 of the time, or off throughout;
# without the series DELAY_DEQUEUE only)
w_features() {
    boost; seed 4
    sets=0; fail=0; steal_changes=0; dd_changes=0; ps=STEAL; pd=DELAY_DEQUEUE
    while [ $(now) -lt $END ]; do
        if [ $SERIES = 0 ]; then s=STEAL
        elif [ $STEAL_MODE = off ]; then s=NO_STEAL
        elif [ $(( RANDOM % 4 )) -ne 0 ]; then s=STEAL; else s=NO_STEAL; fi
        if [ $(( RANDOM % 2 )) -eq 0 ]; then d=DELAY_DEQUEUE; else d=NO_DELAY_DEQUEUE; fi
        k=""
        if [ $has_kick = 1 ]; then
            if [ $(( RANDOM % 2 )) -eq 0 ]; then k=STEAL_KICK; else k=NO_STEAL_KICK; fi
        fi
        if { [ $SERIES = 0 ] || echo $s > $FEAT; } && echo $d > $FEAT &&
           { [ -z "$k" ] || echo $k > $FEAT; }; then
            sets=$((sets + 1))
        else
            fail=$((fail + 1))
        fi
        [ $s = $ps ] || steal_changes=$((steal_changes + 1))
        [ $d = $pd ] || dd_changes=$((dd_changes + 1))
        ps=$s; pd=$d
        sleep 1
    done
    echo "features sets=$sets fail=$fail steal_changes=$steal_changes dd_changes=$dd_changes" > $D/features.cnt
}

# ---- monitor: concurrent readers, dmesg drained (domain attachments)
drain_dmesg() {
    dmesg -c > $D/dmesg.tmp 2>/dev/null
    grep -E "attaching (NULL )?sched-domain|ERROR: " $D/dmesg.tmp >> $D/dmesg.sched
}
w_monitor() {
    boost
    reads=0
    while [ $(now) -lt $END ]; do
        drain_dmesg
        [ $SERIES = 0 ] || { cat $OVERLOAD > /dev/null && reads=$((reads + 1)); }
        cat /proc/schedstat > /dev/null
        sleep 1
    done
    echo "monitor overload_reads=$reads" > $D/monitor.cnt
}

section start
# STEAL is off at boot (series v3): toggle mode starts with it on.
if [ $SERIES = 1 ]; then
    if [ $STEAL_MODE = toggle ]; then echo STEAL > $FEAT || fail "cannot switch STEAL on"
    else echo NO_STEAL > $FEAT || fail "cannot switch STEAL off"; fi
fi
if [ $SERIES = 1 ]; then st_mode="STEAL $STEAL_MODE"; else st_mode="no series"; fi
echo "stress $N CPUs for $DURATION s, start $(now) end $END, $st_mode"
# Wait for the workers by pid, not with a bare `wait`: that would also wait
# for a sched_ext loader started by scx_start, a child of this shell too,
# which runs until scx_stop below (a bare `wait` hung every --scx run).
W=""
start_worker() { "$@" & W="$W $!"; }
in_thr() { echo 0 > $CG/thr/cgroup.procs && "$@"; }
start_worker w_hackbench hackbench0 $HACKBENCH
start_worker w_hackbench hackbench1 $HACKBENCH
start_worker w_msgcount msgcount0 $MSGCOUNT_EXPECT $MSGCOUNT
start_worker w_msgcount msgcount1 $MSGCOUNT_EXPECT $MSGCOUNT
start_worker w_wakelat
start_worker in_thr w_msgcount thr_msgcount $THR_MSGCOUNT_EXPECT $THR_MSGCOUNT
start_worker in_thr w_hackbench thr_hackbench $THR_HACKBENCH
start_worker in_thr w_busy
start_worker w_hotplug
start_worker w_partition
start_worker w_affinity
start_worker w_taskset
start_worker w_features
start_worker w_monitor
for p in $W; do wait $p; done
echo "workers done at $(now)"
if [ -n "$SCX" ]; then
    # A hotplug restart may still be under way: the loader must be back.
    scx_wait enabled || echo "sched_ext loader not in charge at the end"
    section scx_stop
    scx_stop
    grep -E '^(final |scx_idlesteal: restarting|EXIT)' $D/scx.log
fi

# ---- back to a clean state
section cleanup
for c in $(seq 1 $((N - 1))); do
    f=/sys/devices/system/cpu/cpu$c/online
    for t in 1 2 3 4 5; do
        [ "$(cat $f)" = 1 ] && break
        echo 1 > $f 2>/dev/null || sleep 1
    done
done
echo "online $(cat /sys/devices/system/cpu/online)"
for p in $CG/part*; do
    [ -d $p ] || continue
    echo member > $p/cpuset.cpus.partition 2>/dev/null
    rmdir_retry $p || echo "leftover cgroup $p"
done
[ $SERIES = 0 ] || echo STEAL > $FEAT
[ $has_kick = 0 ] || echo NO_STEAL_KICK > $FEAT
echo DELAY_DEQUEUE > $FEAT
section throttle
cat $CG/thr/cpu.stat
rmdir_retry $CG/thr || echo "leftover cgroup $CG/thr"
echo "-cpuset" > $CG/cgroup.subtree_control 2>/dev/null
sleep 2
drain_dmesg

section features_after
cat $FEAT
section online_after
cat /sys/devices/system/cpu/online
section overload_after
[ $SERIES = 0 ] || overload_settled
section schedstat_after
schedsnap
section counters
for w in $WORKERS; do
    if [ -f $D/$w.cnt ]; then cat $D/$w.cnt; else echo "$w missing"; fi
done
echo "dmesg attach=$(grep -c 'attaching sched-domain' $D/dmesg.sched) detach=$(grep -c 'attaching NULL sched-domain' $D/dmesg.sched) errors=$(grep -c 'ERROR: ' $D/dmesg.sched)"
section msgcount
cat $D/*.results 2>/dev/null | grep '^MSGCOUNT'
section affinity
cat $D/affinity.results 2>/dev/null
section wakelat
cat $D/wakelat.results 2>/dev/null
section failures
cat $D/failures 2>/dev/null | head -200
# The trace up to the first violation, for the violating thread only (its
# moves with their stacks, its switches, its mask changes), plus hotplug
# steps and partition markers: the last $TRACE_EXCERPT such lines.
section affinity_trace
if [ -n "$TRACE" ]; then
    echo 0 > $T/tracing_on
    tid=$(grep -m1 'affinity_check: VIOLATION' $T/trace | sed 's/.*VIOLATION tid \([0-9]*\).*/\1/')
    if [ -n "$tid" ]; then
        awk -v tid="$tid" -v keep="$TRACE_EXCERPT" '
            function put(l) { buf[n % keep] = l; n++ }
            /^#/ { next }
            /^ *=> / { if (instack) put($0); next }
            { instack = 0 }
            /<stack trace>/ { instack = want; if (want) put($0); next }
            {
                want = 0
                if ($0 ~ ("pid=" tid " ") || $0 ~ ("prev_pid=" tid " ") || $0 ~ ("next_pid=" tid " ") \
                    || $0 ~ ("tid " tid " ")) want = 1
                else if ($0 ~ /cpuhp_enter:.*\((sched_cpu_(de)?activate|sched_cpu_dying|bringup_cpu|takedown_cpu)\)/ \
                         || $0 ~ /stress: partition/) want = 1
                if (want) put($0)
                if ($0 ~ ("VIOLATION tid " tid " ")) exit
            }
            END { s = n > keep ? n - keep : 0; for (i = s; i < n; i++) print buf[i % keep] }
        ' $T/trace
    else
        echo "no violation in the trace"
    fi
fi
section notes
sort $D/partition.invalid 2>/dev/null | uniq -c | sort -rn | head -10
sort $D/taskset.err 2>/dev/null | sed 's/pid [0-9]*/pid N/' | uniq -c | sort -rn | head -5
grep 'ERROR: ' $D/dmesg.sched | head -50
section end
echo ok
