"""scx_idlesteal's correctness fixes, in one 2x2x2 boot
of the `scx` kernel (docs/scx.md, "Correctness"):

* sync wakeups: a task pinned to a CPU where a pipe ping-pong runs gets its
  turn (workloads/syncpin.c: worst wakeup delay under 2 s over 8 s), with
  scx_idlesteal still in charge afterwards.  Before the fix the wakee always
  went to the waker's local DSQ and the pinned task waited until the
  ping-pong ended (or sched_ext's watchdog ejected the scheduler);
* sync wakees with no CPU idle go to the waker's CPU when nothing waits
  there, straight into its local DSQ when it was their CPU already
  (hackbench over pipes: the counter `waker_cpu`; the sync test above
  keeps it from passing a waiting task); the same run with --cost
  prints each callback's calls and mean run time;
* affinity churn during steals: hackbench runs in a loop while
  workloads/affinity_churn.c gives its tasks random masks as fast as it can
  and affinity_check checks that no task runs outside its mask: no task
  outside its mask, the scheduler steals and is never ejected ("target CPU
  not allowed" was the failure: the second steal pass did not look at the
  mask again);
* N+1 CPU-bound tasks on N CPUs (workloads/hogs.c, 9 on 2x2x2, 6 s), by
  their CPU time in /proc/PID/stat against the fair share (8/9 of a CPU):
  every one gets at least HOGS_MIN_OVER_FAIR of it and the two smallest
  shares HOGS_LOW2_OVER_FAIR on average.  Before, nothing moved a task that
  waits behind a CPU-bound one when no CPU is idle: two tasks shared one
  CPU (1/2 each, 0.56 of fair) for good.  Why two: under a loaded host one
  share can be off by 10% or more (guest time accounting; a share of 1.07
  was seen), two tasks stuck together move both.  EEVDF runs the same
  first, for reference;
* newcomers: 8 spinners that kept their CPUs for NEWC_WAIT s, then 8 more:
  each newcomer gets at most NEWC_MAX_SHARE of a CPU over its first
  NEWC_SECONDS s (fair: 0.5).  A task kept running at a slice end is not
  started again, so a clock moved only by starting tasks stayed where the
  first 8 left it, and the newcomers, placed by it, had their CPUs to
  themselves (0.91-0.98; experiments/2026-11-26-scx-wake-clock/exp22.sh);
* an affinity change on a queued task (workloads/affmove.c, 200 ms slices):
  the idle CPU of its new mask takes it at once in most rounds.  Before, the
  fallback claimed that CPU's idle bit without kicking it, so it stayed
  halted and hidden while the task waited for the busy CPU's slice.  Run
  with -p (no wakeup preemption): the case needs the woken task to wait
  behind the spinner, which the wakeup preemption would have it preempt;
* -m (SCX_OPS_ENQ_MIGRATION_DISABLED, what 6.12 does): loads and runs;
* cgroup weights: two cgroups of cpu.weight 100 and 400, each with as many
  spinners as CPUs (8 + 8 on 2x2x2), by the CPU time each cgroup used
  (cpu.stat usage_usec over CGW_SECONDS, read for both by one SCHED_FIFO
  task: workloads/cgshare.c): the heavy one gets between CGW_RATIO_MIN and CGW_RATIO_MAX
  times the light one's (4 is exact).  EEVDF runs the same first, for
  reference (not judged).  Before, scx_idlesteal implemented no cgroup
  callback and gave 1:1.  Then at 1:10,000 (cpu.weight's extremes; CPU
  time per task from hogs): it stays in charge and every light task runs,
  where vtime order alone would make a light task wait for minutes and
  sched_ext's watchdog eject the scheduler after 5 s; and a sleeper of the
  root (sleeplat, 100 ms period) waits a median under 100 ms, where the
  global clock, carried off by the light tasks, made it wait 1 s at every
  wakeup;
* nested cgroups: a (100) with children a/x (100) and a/y (300), beside b
  (100), 8 spinners in each of x, y and b: b gets about what x and y get
  together (CGN_B_OVER_A_MIN..MAX around 1) and y about 3 times x.  Before,
  the weights were flat (each cgroup a child of the root by its own
  cpu.weight): b got a quarter of what x and y got;
* cpu.idle: cgroups idle and busy, 8 spinners each: with idle's cpu.idle
  set before the load, and again while loaded, busy gets more than
  CGI_IDLE_RATIO_MIN times idle's CPU (and idle some); cleared, about the
  same.  Before, cpu.idle was not applied (1:1 throughout);
* sched_yield() gives the CPU to a task that waits for it: two spinners on
  CPU 1, one yielding at every turn of its loop (hogs -y 1): the other gets
  at least YIELD_WAITER_MIN of the CPU, where a yield that kept the slice
  would leave it a half (vtime by runtime); EEVDF runs the same first, for
  reference (not judged), and the yield_give counter moves;
* a crowded CPU: five CPU-bound tasks pinned to CPU 1, one pinned to each
  other CPU, and a task pinned to CPU 1 that sleeps 10 ms in a loop
  (sleeplat): its median wait on the runqueue stays under CROWD_P50_MAX_US,
  and wakeups were bounded (`wake_bounded`).  Before, a waking task was
  placed by a clock the other CPUs moved, queued behind the five by a gap
  that grew every second, and ran only when the starvation guard found it
  (a median of about 1 s); EEVDF runs the same first, for reference;
* the starvation guard with more than 32 tasks queued and the watchdog at
  500 ms (-t): STARVE_HEAVY spinners of a cgroup of cpu.weight 10,000 and
  two of weight 1, all pinned to one CPU, with slices of 5 ms (-l) so that
  a turn of the queue is longer than the guard's limit: the two run (vtime
  order alone would keep them waiting for minutes), the guard acts
  (`starved`) and the scheduler stays in charge.  Before, the guard walked
  the first 32 tasks from the queue's head while the starved ones sat at
  its tail, and waited a fixed 1 s where the watchdog's limit was 500 ms;
  then it ran the first late task it found from the tail, and the tasks at
  the head waited past the watchdog's limit;
* cpufreq: a spinner on one CPU for a few seconds: that CPU's target
  (scx_bpf_cpuperf_set(), printed at exit with --log-level debug) is near
  full performance and the least busy CPU's far below; before, no target
  was ever set and every CPU stayed at full performance;
* CPU hotplug without a restart: loaded with CPU 6 offline, then CPU 6
  online and six CPUs off- and online in turn under hackbench: sched_ext's
  state, read every 100 ms, never leaves "enabled", the loader never
  restarts and rewrites its topology each time, and it steals.  Before, it
  had no ops.cpu_online/offline and sched_ext exited it at every change;
* veristat (the kernel tree's tools/testing/selftests/bpf/veristat.c, built
  by idlesteal/scx/own.py) passes every program of the BPF object through the
  verifier one by one: verdict success for each but the ones the loader
  attaches itself (LOADER_SET_PROGS: veristat cannot load them);
* the watchdog limit and the debug dump: loaded with -t 1000 (a 1 s limit)
  and -s 3000000 (3 s slices), two spinners pinned to one CPU make one of
  them wait 3 s: it is ejected for a runnable task stall and its loader prints sched_ext's debug dump with ours in it.  This
  part ejects the scheduler on purpose, last in the boot, after a marker on
  the console; every other part is checked for ejections before it.

IDLESTEAL_TEST_SCX_IDLESTEAL=PATH runs them against another build of the
loader (e.g. one of an older commit, to see them fail).
"""
from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from idlesteal.guest import image, topology, vm
from idlesteal.scx import own as scx
from idlesteal.runs import sidebyside

from .conftest import kernel_for, no_build

pytestmark = pytest.mark.guest

SYNC_CPU = 5
SYNC_SECONDS = 8
SYNC_BOUND_MS = 2000.0
CHURN_SECONDS = 20
HOGS_SECONDS = 6
HOGS_MIN_OVER_FAIR = 0.5
HOGS_LOW2_OVER_FAIR = 0.7
YIELD_SECONDS = 3
# A yield that keeps the slice leaves the waiter a half (0.50 measured with
# such a loader); one that gives way left it 0.98 when the test was written
# and 0.785 in a cold CI of 2026-12-02, where EEVDF's in the same boot was
# 0.724: 0.65 keeps the two apart without failing on the slower host.
YIELD_WAITER_MIN = 0.65
# scx_end: unload if the loader still runs; if sched_ext ejected it, it has
# exited already: its exit status, and say so.  after: the state and ops
# (still_in_charge()).  HELPERS and YIELD also run on the other bases
# (test_scx_ports.py).
HELPERS = f"""
scx_end() {{
    if kill -0 "$scx_pid" 2>/dev/null; then
        scx_stop
    else
        _rc=0; wait "$scx_pid" || _rc=$?
        echo "rc $_rc"
        echo "loader exited"
    fi
}}
after() {{ echo "after $(cat {scx.STATE}) $(cat {scx.OPS} 2>/dev/null)"; }}
"""
YIELD = f"""
section yield
taskset -c 1 hogs -n 2 -y 1 -d {YIELD_SECONDS} > /tmp/yield_eevdf.out 2>&1 || echo "hogs eevdf rc $?"
scx_start /tmp/yield.log scx_idlesteal
taskset -c 1 hogs -n 2 -y 1 -d {YIELD_SECONDS} > /tmp/yield.out 2>&1 || echo "hogs rc $?"
after
scx_end
cat /tmp/yield.log
section yield_out
cat /tmp/yield.out
section yield_eevdf
cat /tmp/yield_eevdf.out
"""
AFFMOVE = "affmove -s 1 -y 3 -b 2 -p 5 -r 20"   # CPUs 1-3 share an LLC, 5 does not
AFFMOVE_SLICE_US = 200000   # with -p: the task must wait behind SRC's spinner
HOTPLUG_CPUS = (3, 6, 1, 7, 3, 5)
CROWD_CPU = 1
# cpufreq: a spinner on PERF_CPU for PERF_SECONDS, the rest of the guest
# about idle; the targets the loader prints at exit (--log-level debug).
PERF_CPU = 3
PERF_SECONDS = 3
PERF_BUSY_MIN = 900        # of 1024: the spinner's CPU at full performance
PERF_IDLE_MAX = 512        # the least busy CPU well below it
CROWD_HOGS = 5
CROWD_SECONDS = 8
# Five default slices (20 ms).  EEVDF's median was 40-54 ms when the test
# was written; placed by the clock alone about 1 s (the guard's rounds), and
# bounded at two base slices behind the head 216 ms (every task of the
# crowd ran some ten times before the sleeper).
CROWD_P50_MAX_US = 100_000
STARVE_CPU = 2
STARVE_HEAVY = 40          # more than STEAL_MAX_WALK, the guard's walk
STARVE_TIMEOUT_MS = 500
# Shortest slices of 5 ms: a turn of the 42 tasks takes some 210 ms, more
# than the guard's limit (100 ms at -t 500) and less than the watchdog's.
# Most tasks are then over the limit at once and the guard acts at every
# dispatch: one that took the first late task from the queue's tail left
# the tasks at its head waiting past the watchdog's limit (ejected in 4 of 4
# rounds; at the default 1 ms slices, where the host's load decides how
# long a turn is, once in a CI run).
STARVE_SLICE_MIN_US = 5000
STARVE_SECONDS = 6
MARK = "idlesteal-test: deliberate stall from here"
VERISTAT_OBJ = "/usr/share/scx_idlesteal.bpf.o"
# Newcomers: 8 spinners that kept their CPUs, then 8 more.  Fair: 0.5 each
# (EEVDF 0.47-0.52); with the clock left behind 0.91-0.98 (exp22).
NEWC_WAIT = 6
NEWC_SECONDS = 2
NEWC_MAX_SHARE = 0.75
# cgroup weights: 1:4.  The bounds hold the ratio of CPU time at 2.5-6 where
# 4 is exact: the spinners' turns are 20 ms slices, so over 6 s a ratio
# moves by a slice or two of a task at every point where the tasks are
# rebalanced between the two LLCs, and the host's load stretches the
# guest's CPUs unevenly (CPU time under TCG on a shared host: one share
# 10% off was seen).  1:1, what a scheduler without cgroup weights gives,
# and 2:1 are outside; EEVDF's own ratio on this test was 2.65-3.5.
CGW_SPINNERS = 8
CGW_SECONDS = 6
CGW_RATIO_MIN = 2.5
CGW_RATIO_MAX = 6.0
CGW_EXTREME_RATIO_MIN = 10
# At 1:10,000 a sleeper of the root (sched_ext's watchdog work is one: a
# kworker) waking every 100 ms: its median wait on the run queue.  Placed
# a slice behind the global clock it waited for the 1 s starvation limit
# at every wakeup (median 0.47-1.03 s), and the watchdog work with it (one
# ejection in `.ci/run`); placed by its CPU's clock 0.13-0.24 ms, EEVDF
# 0.15-0.20 ms (2x2x2, 2026-11-26); by the global clock
# moved a quarter slice at most per task (advance_clock()), 0 in all
# 7 trials (experiments/2026-11-26-scx-wake-clock/, exp21-exp22).
ROOT_SLEEPER_PERIOD_US = 100000
ROOT_SLEEPER_P50_MAX_US = 100000
# Nested cgroups: a (100) with children a/x (100) and a/y (300), beside b
# (100), CGW_SPINNERS spinners in each of x, y and b.  Followed down the
# hierarchy, a and b split the CPUs 1:1 and x and y split a's half 1:3:
# x:y:b = 1:3:4, b/(x+y) = 1.  Flat (every cgroup a child of the root by its
# own cpu.weight, what scx_idlesteal did before): 1:3:1, b/(x+y) = 0.25.
# The bounds are as wide as the 1:4 test's, relative to 1 and 3.
CGN_B_OVER_A_MIN = 0.6
CGN_B_OVER_A_MAX = 1.6
CGN_Y_OVER_X_MIN = 1.8
CGN_Y_OVER_X_MAX = 4.5
# cpu.idle: cgroups idle and busy (both cpu.weight 100), 8 spinners each.
# An idle cgroup weighs cpu.weight 1 here (CFS: 3/1024 of nice 0), so busy
# gets ~100x idle's CPU; the starvation guard gives each idle task a slice
# a second (~0.1-0.2 of a CPU in all, as the 1:10,000 test's light ones).
# Set before the load (read by ops.cgroup_init()), cleared and set again
# while loaded (ops.cgroup_set_idle()).  Cleared, the two share 1:1.
CGI_SECONDS = 4
CGI_IDLE_RATIO_MIN = 10
CGI_CLEARED_RATIO = (0.5, 2.0)

SCRIPT = f"""
section topology
{topology.GUEST_SNIPPET.strip()}
{HELPERS}
section veristat
veristat -o csv -e file,prog,verdict,insns,states,duration {VERISTAT_OBJ} 2>&1 || echo "veristat rc $?"

section sync
scx_start /tmp/sync.log scx_idlesteal
syncpin -c {SYNC_CPU} -d {SYNC_SECONDS} || echo "syncpin rc $?"
after
scx_end
cat /tmp/sync.log

section wakercpu
scx_start /tmp/wakercpu.log scx_idlesteal --cost
for i in 1 2 3; do hackbench -p -g 4 -l 200 >/dev/null || echo "hackbench rc $?"; done
after
scx_end
cat /tmp/wakercpu.log

section churn
scx_start /tmp/churn.log scx_idlesteal
(while [ ! -e /tmp/churn.stop ]; do hackbench -g 4 -l 200 >/dev/null; done) &
hb=$!
affinity_churn -d {CHURN_SECONDS} -t 2 hackbench > /tmp/churn.out 2>&1 &
ch=$!
affinity_check -t 8 -d {CHURN_SECONDS} -c 20 > /tmp/check.out 2>&1 || echo "affinity_check rc $?"
wait $ch || echo "affinity_churn rc $?"
touch /tmp/churn.stop
wait $hb
after
scx_end
cat /tmp/churn.log
section churn_out
cat /tmp/churn.out
section check_out
tail -n 5 /tmp/check.out

section hogs
hogs -d {HOGS_SECONDS} > /tmp/hogs_eevdf.out 2>&1 || echo "hogs eevdf rc $?"
scx_start /tmp/hogs.log scx_idlesteal
hogs -d {HOGS_SECONDS} > /tmp/hogs.out 2>&1 || echo "hogs rc $?"
after
scx_end
cat /tmp/hogs.log
section hogs_out
cat /tmp/hogs.out
section hogs_eevdf
cat /tmp/hogs_eevdf.out

section newcomers
scx_start /tmp/newc.log scx_idlesteal
hogs -n 8 -w 1 -d {NEWC_WAIT + NEWC_SECONDS + 4} > /dev/null &
a=$!
sleep {NEWC_WAIT}
hogs -n 8 -w 1 -d {NEWC_SECONDS} > /tmp/newc.out 2>&1 || echo "hogs newcomers rc $?"
wait $a || echo "hogs rc $?"
after
scx_end
cat /tmp/newc.log
section newcomers_out
cat /tmp/newc.out

{YIELD}
section affmove
scx_start /tmp/affmove.log scx_idlesteal -s {AFFMOVE_SLICE_US} -p
{AFFMOVE} > /tmp/affmove.out 2>&1 || echo "affmove rc $?"
after
scx_end
cat /tmp/affmove.log
section affmove_out
cat /tmp/affmove.out

section migdis
scx_start /tmp/migdis.log scx_idlesteal -m
hackbench -g 2 -l 50 >/dev/null
after
scx_end
cat /tmp/migdis.log

section cgweight
CG=/sys/fs/cgroup
echo "+cpu" > $CG/cgroup.subtree_control
mkdir -p $CG/light $CG/heavy
echo 100 > $CG/light/cpu.weight
echo 400 > $CG/heavy/cpu.weight
# cgrun TAG NAME SECONDS CGROUP...: {CGW_SPINNERS} spinners in each CGROUP
# (below $CG), the CPU each cgroup got over one window of SECONDS, read by
# cgshare (SCHED_FIFO: a reader of the fair class may wait behind the
# spinners, and read one cgroup a second after the other); prints
# "TAG NAME RESULT {{json}}".  Used by the cgnest and cgidle sections too.
cgrun() {{
    _tag=$1; _name=$2; _secs=$3; shift 3
    _pids=; _dirs=
    for _g in "$@"; do
        sh -c "echo \\$\\$ > $CG/$_g/cgroup.procs; exec hogs -n {CGW_SPINNERS} -w 0 -d $((_secs + 4))" > /dev/null &
        _pids="$_pids $!"; _dirs="$_dirs $CG/$_g"
    done
    cgshare -w 2 -d $_secs $_dirs > /tmp/cgs.out || echo "cgshare failed"
    echo "$_tag $_name $(grep RESULT /tmp/cgs.out)"
    wait $_pids || echo "hogs rc $?"
}}
cgrun cgw eevdf {CGW_SECONDS} light heavy
scx_start /tmp/cgw.log scx_idlesteal
cgrun cgw scx_idlesteal {CGW_SECONDS} light heavy
echo "mid $(cat {scx.STATE}) $(cat {scx.OPS} 2>/dev/null)"
echo 1 > $CG/light/cpu.weight
echo 10000 > $CG/heavy/cpu.weight
# each hogs measures its own tasks (every light one ran); cgshare the two
# cgroups over one window.  Each hogs' parent may wait up to the 1 s
# starvation limit at each wakeup here, so the hogs run 3 s beyond
# cgshare's window, whichever starts first.
sh -c "echo \\$\\$ > $CG/light/cgroup.procs; exec hogs -n {CGW_SPINNERS} -w 3 -d {CGW_SECONDS + 3}" > /tmp/xl.out &
a=$!
sh -c "echo \\$\\$ > $CG/heavy/cgroup.procs; exec hogs -n {CGW_SPINNERS} -w 3 -d {CGW_SECONDS + 3}" > /tmp/xh.out &
b=$!
# a sleeper of the root beside them (what the watchdog's kworker is)
sleeplat -n 0 -p {ROOT_SLEEPER_PERIOD_US} -w 1 -d {CGW_SECONDS} > /tmp/xr.out &
r=$!
cgshare -w 3 -d {CGW_SECONDS} $CG/light $CG/heavy > /tmp/xs.out || echo "cgshare failed"
wait $a $b $r || echo "hogs or sleeplat rc $?"
echo "extreme light $(grep RESULT /tmp/xl.out)"
echo "extreme root-sleeper $(grep RESULT /tmp/xr.out)"
echo "extreme share $(grep RESULT /tmp/xs.out)"
echo "extreme heavy $(grep RESULT /tmp/xh.out)"
after
scx_end
cat /tmp/cgw.log

section cgnest
CG=/sys/fs/cgroup
echo "+cpu" > $CG/cgroup.subtree_control
mkdir -p $CG/a $CG/b
echo "+cpu" > $CG/a/cgroup.subtree_control
mkdir -p $CG/a/x $CG/a/y
echo 100 > $CG/a/cpu.weight
echo 100 > $CG/b/cpu.weight
echo 100 > $CG/a/x/cpu.weight
echo 300 > $CG/a/y/cpu.weight
cgrun cgn eevdf {CGW_SECONDS} a/x a/y b
scx_start /tmp/cgn.log scx_idlesteal
cgrun cgn scx_idlesteal {CGW_SECONDS} a/x a/y b
after
scx_end
cat /tmp/cgn.log

section cgidle
CG=/sys/fs/cgroup
echo "+cpu" > $CG/cgroup.subtree_control
mkdir -p $CG/idle $CG/busy
echo 1 > $CG/idle/cpu.idle
cgrun cgi eevdf {CGI_SECONDS} idle busy
scx_start /tmp/cgi.log scx_idlesteal
cgrun cgi at-load {CGI_SECONDS} idle busy
echo 0 > $CG/idle/cpu.idle
cgrun cgi cleared {CGI_SECONDS} idle busy
echo 1 > $CG/idle/cpu.idle
cgrun cgi set {CGI_SECONDS} idle busy
after
scx_end
cat /tmp/cgi.log

section hotplug
echo 0 > /sys/devices/system/cpu/cpu6/online
scx_start /tmp/hp.log scx_idlesteal
(while [ ! -e /tmp/hp.stop ]; do hackbench -g 2 -l 50 >/dev/null; done) &
hb=$!
(while [ ! -e /tmp/hp.stop ]; do echo "state $(cat {scx.STATE})"; sleep 0.1; done) > /tmp/hp.states &
st=$!
sleep 1
echo 1 > /sys/devices/system/cpu/cpu6/online
sleep 1
for cpu in {' '.join(map(str, HOTPLUG_CPUS))}; do
    echo 0 > /sys/devices/system/cpu/cpu$cpu/online; sleep 0.5
    echo 1 > /sys/devices/system/cpu/cpu$cpu/online; sleep 0.5
done
sleep 1
touch /tmp/hp.stop
wait $hb $st
echo "online $(cat /sys/devices/system/cpu/online)"
after
scx_end
cat /tmp/hp.log
section hotplug_states
sort /tmp/hp.states | uniq -c

section cpuperf
scx_start /tmp/perf.log scx_idlesteal --log-level debug
taskset -c {PERF_CPU} sh -c 'while :; do :; done' &
s1=$!
sleep {PERF_SECONDS}
after
scx_end
kill $s1
wait $s1 2>/dev/null
cat /tmp/perf.log

section crowd
# crowd TAG: CROWD_HOGS spinners on CROWD_CPU, one on each other CPU, and a
# sleeper on CROWD_CPU; prints "TAG RESULT {{json}}" (sleeplat's)
crowd() {{
    _pids=
    for _c in {' '.join(map(str, range(8)))}; do
        _n=1; [ $_c -eq {CROWD_CPU} ] && _n={CROWD_HOGS}
        taskset -c $_c hogs -n $_n -w 0 -d {CROWD_SECONDS + 3} > /dev/null &
        _pids="$_pids $!"
    done
    taskset -c {CROWD_CPU} sleeplat -n 0 -p 10000 -w 2 -d {CROWD_SECONDS} > /tmp/crowd.out || echo "sleeplat rc $?"
    echo "$1 $(grep RESULT /tmp/crowd.out)"
    wait $_pids || echo "hogs rc $?"
}}
crowd eevdf
scx_start /tmp/crowd.log scx_idlesteal
crowd scx_idlesteal
after
scx_end
cat /tmp/crowd.log

section starve
CG=/sys/fs/cgroup
echo "+cpu" > $CG/cgroup.subtree_control
mkdir -p $CG/slight $CG/sheavy
echo 1 > $CG/slight/cpu.weight
echo 10000 > $CG/sheavy/cpu.weight
scx_start /tmp/starve.log scx_idlesteal -t {STARVE_TIMEOUT_MS} -l {STARVE_SLICE_MIN_US}
sh -c "echo \\$\\$ > $CG/sheavy/cgroup.procs; exec taskset -c {STARVE_CPU} hogs -n {STARVE_HEAVY} -w 1 -d {STARVE_SECONDS}" > /dev/null &
a=$!
sh -c "echo \\$\\$ > $CG/slight/cgroup.procs; exec taskset -c {STARVE_CPU} hogs -n 2 -w 1 -d {STARVE_SECONDS}" > /tmp/starve.out &
b=$!
wait $a $b || echo "hogs rc $?"
echo "light $(grep RESULT /tmp/starve.out)"
after
scx_end
cat /tmp/starve.log

section dump
echo "{MARK}" > /dev/console
scx_start /tmp/dump.log scx_idlesteal -t 1000 -s 3000000 || echo "not in charge"
taskset -c 3 sh -c 'while :; do :; done' &
s1=$!
taskset -c 3 sh -c 'while :; do :; done' &
s2=$!
i=0
while kill -0 "$scx_pid" 2>/dev/null && [ $i -lt 300 ]; do sleep 0.1; i=$((i + 1)); done
kill $s1 $s2
wait $s1 $s2 2>/dev/null
scx_end
echo "state $(cat {scx.STATE})"
cat /tmp/dump.log
"""


def loader() -> Path:
    other = os.environ.get("IDLESTEAL_TEST_SCX_IDLESTEAL")
    if other:
        return Path(other)
    if no_build():
        return scx.binary("scx_idlesteal")
    return scx.build_schedulers(names=("scx_idlesteal",))["scx_idlesteal"]


def veristat_files() -> list[str]:
    """veristat and the BPF object it checks (of the build, not of
    IDLESTEAL_TEST_SCX_IDLESTEAL's loader)."""
    return [f"{scx.build_veristat()}:/usr/bin/veristat",
            f"{scx.bpf_object()}:{VERISTAT_OBJ}"]


@pytest.fixture(scope="module")
def run() -> vm.RunResult:
    kernel = kernel_for(scx.VARIANT)
    initrd = image.build_base(files=scx.image_files({"scx_idlesteal": loader()})
                              + veristat_files())
    preset = topology.get("2x2x2")
    res = vm.run_script(SCRIPT, preset, kernel, initrd, timeout=600, name="scx-correctness")
    topology.verify(preset, res.sections["topology"])
    return res


def lines(res: vm.RunResult, section: str) -> list[str]:
    return [l.strip() for l in res.sections[section].splitlines() if l.strip()]


def result(res: vm.RunResult, section: str) -> dict:
    rows = [l for l in lines(res, section) if l.startswith("RESULT ")]
    assert rows, res.sections[section]
    return json.loads(rows[-1][len("RESULT "):])


def enabled_line(got: list[str], tag: str) -> bool:
    """A "TAG enabled OPS" line with scx_idlesteal's ops name (which has the
    Rust schedulers' version suffix: idlesteal_2.0.0_x86_64_...)."""
    return any(len(w) == 3 and w[:2] == [tag, "enabled"] and sidebyside.ops_matches(w[2], "idlesteal")
               for w in (l.split() for l in got))


def still_in_charge(res: vm.RunResult, section: str) -> None:
    """The loader was in charge to the end; if not, the message starts with
    its exit reason (which task stalled, on which CPU)."""
    got = lines(res, section)
    why = "\n".join([l for l in got if l.startswith("EXIT:")] + got)
    assert enabled_line(got, "after"), why
    assert "rc 0" in got and "state disabled" in got and "loader exited" not in got, why


def console_before_mark(res: vm.RunResult) -> str:
    text = res.console.read_text(errors="replace")
    assert MARK in text, "the dump section's marker is not on the console"
    return text[:text.index(MARK)]


def test_pinned_task_runs_beside_a_sync_ping_pong(run):
    r = result(run, "sync")
    assert r["roundtrips"] > 1000, r          # the ping-pong ran
    assert r["probe_max_delay_ms"] < SYNC_BOUND_MS, r
    assert r["probe_wakeups"] > 100, r          # 10 ms sleeps for 8 s: up to 800
    still_in_charge(run, "sync")
    final = scx.final_stats(run.sections["sync"])
    assert int(final["sync_queued"]) > 0, final   # the fixed path was taken


def test_sync_wakee_goes_to_the_waker_cpu_when_none_is_idle(run):
    """hackbench over pipes (4 groups of 20 writers and 20 readers on 8
    CPUs, three times): with no CPU idle, sync wakees were sent to the
    waker's CPU (nothing waiting there), and the scheduler stayed in
    charge.  (8 pipe pairs of hackbench -T -f 1 took the path only 5
    times in the first run: the readers sleep, CPUs stay idle.)"""
    still_in_charge(run, "wakercpu")
    final = scx.final_stats(run.sections["wakercpu"])
    assert int(final["waker_cpu"]) > 0, final


def test_cost_times_each_callback(run):
    """--cost (the wakercpu section's loader): at exit a line per loaded
    callback with its calls and mean run time, from the kernel's BPF
    run-time statistics; the wakeup and switch callbacks ran and took
    time."""
    cost = {}
    for l in lines(run, "wakercpu"):
        f = l.split()
        if f[:1] == ["cost"]:
            assert len(f) == 8 and f[2::2] == ["calls", "mean_ns", "total_ms"], l
            cost[f[1]] = (int(f[3]), int(f[5]))
    for name in ("select_cpu", "enqueue", "dispatch", "running", "stopping"):
        calls, mean = cost[name]
        assert calls > 1000 and mean > 0, (name, cost[name])
    assert cost["dump"] == (0, 0), cost


def test_affinity_churn_during_steals(run):
    churn = result(run, "churn_out")
    assert churn["changes"] > 1000 and churn["tasks_seen"] > 40 and churn["failures"] == 0, churn
    check = result(run, "check_out")
    assert check["violations"] == 0 and check["checks"] > 0, check
    got = lines(run, "churn")
    assert not [l for l in got if l.startswith(("affinity_check rc", "affinity_churn rc"))], got
    still_in_charge(run, "churn")
    assert int(scx.final_stats(run.sections["churn"])["steals"]) > 0


def test_n_plus_one_cpu_bound_tasks_share_the_cpus(run):
    r = result(run, "hogs_out")
    assert r["tasks"] == r["cpus"] + 1 == 9, r
    assert r["min_over_fair"] >= HOGS_MIN_OVER_FAIR, r
    assert r["low2_over_fair"] >= HOGS_LOW2_OVER_FAIR, r
    assert not [l for l in lines(run, "hogs") if l.startswith("hogs")], lines(run, "hogs")
    still_in_charge(run, "hogs")
    assert int(scx.final_stats(run.sections["hogs"])["pulls"]) > 0   # the fixed path was taken
    assert result(run, "hogs_eevdf")["tasks"] == 9


def test_newcomers_do_not_run_ahead_of_tasks_kept_running(run):
    r = result(run, "newcomers_out")
    assert r["tasks"] == 8, r
    print(f"newcomers beside 8 spinners: shares {r['shares']}")
    assert r["max"] <= NEWC_MAX_SHARE, r
    assert not [l for l in lines(run, "newcomers") if l.startswith("hogs")], \
        lines(run, "newcomers")
    still_in_charge(run, "newcomers")


def test_yield_gives_the_cpu_to_a_waiting_task(run):
    r = result(run, "yield_out")
    assert r["tasks"] == 2 and r["cpus"] == 1, r
    yielder, waiter = r["shares"]
    print(f"yield: yielder {yielder:.3f}, waiter {waiter:.3f} "
          f"(EEVDF: {result(run, 'yield_eevdf')['shares']})")
    assert waiter >= YIELD_WAITER_MIN, r
    assert not [l for l in lines(run, "yield") if l.startswith("hogs")], lines(run, "yield")
    still_in_charge(run, "yield")
    assert int(scx.final_stats(run.sections["yield"])["yield_give"]) > 0


def test_queued_task_moved_by_affinity_runs_on_the_idle_cpu(run):
    r = result(run, "affmove_out")
    assert r["rounds"] == 20, r
    assert r["on_idle"] >= 10 and r["median_ms"] < 100, r
    assert not [l for l in lines(run, "affmove") if l.startswith("affmove rc")]
    still_in_charge(run, "affmove")
    assert int(scx.final_stats(run.sections["affmove"])["fallback"]) > 0


def test_loads_with_migration_disabled_enqueues(run):
    assert "enqueues migration-disabled tasks" in run.sections["migdis"]
    still_in_charge(run, "migdis")


def cgshare(res: vm.RunResult, *prefix: str, section: str = "cgweight") -> dict:
    """The cgshare RESULT on the line of `section` that starts with `prefix`."""
    for l in lines(res, section):
        w = l.split(maxsplit=len(prefix) + 1)
        if tuple(w[:len(prefix)]) == prefix and w[len(prefix):][:1] == ["RESULT"]:
            return json.loads(w[-1])
    raise AssertionError(res.sections[section])


def test_cgroup_weights_1_to_4(run):
    light, heavy = cgshare(run, "cgw", "scx_idlesteal")["shares"]
    eevdf = cgshare(run, "cgw", "eevdf")["shares"]
    print(f"cgroup weights 100:400, CPUs light/heavy: scx_idlesteal {light:.3f}/{heavy:.3f} "
          f"= 1:{heavy / max(light, 1e-6):.2f}, EEVDF {eevdf[0]:.3f}/{eevdf[1]:.3f} "
          f"= 1:{eevdf[1] / max(eevdf[0], 1e-6):.2f}")
    # the two together had the 8 CPUs (cgshare's reads aside), and no more
    assert 0.8 * 8 < light + heavy < 8 * 1.05, (light, heavy)
    assert CGW_RATIO_MIN <= heavy / max(light, 1e-6) <= CGW_RATIO_MAX, (light, heavy, eevdf)
    assert enabled_line(lines(run, "cgweight"), "mid"), lines(run, "cgweight")
    final = scx.final_stats(run.sections["cgweight"])
    assert int(final["kept"]) > 0, final   # the path that holds the weights was taken


def test_cgroup_weights_1_to_10000_no_stall(run):
    tasks = cgshare(run, "extreme", "light")
    light, heavy = cgshare(run, "extreme", "share")["shares"]
    print(f"cgroup weights 1:10000: CPUs light {light:.4f}, heavy {heavy:.4f}; "
          f"light tasks' shares {tasks['shares']}")
    assert len(tasks["shares"]) == CGW_SPINNERS
    assert min(tasks["shares"]) > 0.002, tasks    # every light task ran (12 ms in 6 s)
    assert 0.8 * 8 < light + heavy < 8 * 1.05, (light, heavy)
    # The light tasks run through the starvation guard only: about one
    # slice each per STARVE_MS of waiting.  CGW_EXTREME_RATIO_MIN, not
    # 10,000: how closely weights are followed is the 1:4 test's job.
    assert heavy > CGW_EXTREME_RATIO_MIN * light, (light, heavy)
    # a task of the root that sleeps and wakes is placed by its CPU's clock
    sleeper = cgshare(run, "extreme", "root-sleeper")
    print(f"root sleeper beside them: {sleeper}")
    assert sleeper["delay_p50_us"] < ROOT_SLEEPER_P50_MAX_US, sleeper
    still_in_charge(run, "cgweight")
    final = scx.final_stats(run.sections["cgweight"])
    assert int(final["starved"]) > 0, final   # what kept the light ones running


def test_nested_cgroup_weights(run):
    x, y, b = cgshare(run, "cgn", "scx_idlesteal", section="cgnest")["shares"]
    ex, ey, eb = cgshare(run, "cgn", "eevdf", section="cgnest")["shares"]
    print(f"nested cgroups a/x 100, a/y 300 | b 100, CPUs x/y/b: scx_idlesteal "
          f"{x:.3f}/{y:.3f}/{b:.3f} (b/(x+y) {b / max(x + y, 1e-6):.2f}, y/x {y / max(x, 1e-6):.2f}), "
          f"EEVDF {ex:.3f}/{ey:.3f}/{eb:.3f} (b/(x+y) {eb / max(ex + ey, 1e-6):.2f}, "
          f"y/x {ey / max(ex, 1e-6):.2f})")
    assert 0.8 * 8 < x + y + b < 8 * 1.05, (x, y, b)
    assert CGN_B_OVER_A_MIN <= b / max(x + y, 1e-6) <= CGN_B_OVER_A_MAX, (x, y, b)
    assert CGN_Y_OVER_X_MIN <= y / max(x, 1e-6) <= CGN_Y_OVER_X_MAX, (x, y, b)
    still_in_charge(run, "cgnest")


def test_cgroup_idle(run):
    got = {k: cgshare(run, "cgi", k, section="cgidle")["shares"]
           for k in ("eevdf", "at-load", "cleared", "set")}
    print("cpu.idle, CPUs idle/busy: " + ", ".join(
        f"{k} {i:.3f}/{b:.3f} (1:{b / max(i, 1e-6):.1f})" for k, (i, b) in got.items()))
    for k in ("at-load", "cleared", "set"):
        idle, busy = got[k]
        assert 0.8 * 8 < idle + busy < 8 * 1.05, (k, got)
    for k in ("at-load", "set"):        # read at ops.cgroup_init(); ops.cgroup_set_idle()
        idle, busy = got[k]
        assert busy > CGI_IDLE_RATIO_MIN * idle and idle > 0, (k, got)
    idle, busy = got["cleared"]
    assert CGI_CLEARED_RATIO[0] <= busy / max(idle, 1e-6) <= CGI_CLEARED_RATIO[1], got
    still_in_charge(run, "cgidle")


def test_a_task_waking_on_a_crowded_cpu_waits_a_few_slices(run):
    got = lines(run, "crowd")
    delay = {}
    for tag in ("eevdf", "scx_idlesteal"):
        line = next((x for x in got if x.startswith(f"{tag} RESULT ")), None)
        assert line, (tag, got)
        delay[tag] = json.loads(line.split("RESULT ", 1)[1])
    print(f"crowded CPU, sleeper's median run-queue wait: EEVDF "
          f"{delay['eevdf']['delay_p50_us'] / 1000:.1f} ms, scx_idlesteal "
          f"{delay['scx_idlesteal']['delay_p50_us'] / 1000:.1f} ms "
          f"({delay['scx_idlesteal']['wakeups']} wakeups, EEVDF {delay['eevdf']['wakeups']})")
    assert delay["scx_idlesteal"]["delay_p50_us"] < CROWD_P50_MAX_US, delay
    still_in_charge(run, "crowd")
    final = scx.final_stats(run.sections["crowd"])
    assert int(final["wake_bounded"]) > 0, final


def test_starvation_guard_keeps_every_wait_under_a_short_watchdog(run):
    got = lines(run, "starve")
    line = next((x for x in got if x.startswith("light RESULT ")), None)
    assert line, got
    light = json.loads(line.split("RESULT ", 1)[1])
    print(f"{STARVE_HEAVY} heavy + 2 light spinners on one CPU, -t {STARVE_TIMEOUT_MS} "
          f"-l {STARVE_SLICE_MIN_US}: "
          f"light shares {light['shares']}")
    assert len(light["shares"]) == 2 and min(light["shares"]) > 0, light
    still_in_charge(run, "starve")
    final = scx.final_stats(run.sections["starve"])
    assert int(final["starved"]) > 0, final


def test_cpufreq_target_follows_each_cpus_load(run):
    """The spinner's CPU asks for (nearly) full performance and the least
    busy CPU for far less.  Before, scx_bpf_cpuperf_set() was never called
    and every CPU's target stayed at full performance (no perf line)."""
    got = lines(run, "cpuperf")
    line = next((l for l in got if l.startswith("perf target/1024:")), None)
    assert line, got
    perf = {int(c): int(v) for c, v in (w.split("=") for w in line.split(":", 1)[1].split())}
    print(f"cpufreq targets with a spinner on CPU {PERF_CPU}: {perf}")
    assert perf[PERF_CPU] >= PERF_BUSY_MIN, perf
    assert min(perf.values()) <= PERF_IDLE_MAX, perf
    still_in_charge(run, "cpuperf")


def test_cpu_hotplug_without_restart(run):
    got = lines(run, "hotplug")
    assert "online 0-7" in got, got
    still_in_charge(run, "hotplug")
    text = run.sections["hotplug"]
    assert "restarting" not in text, text[-2000:]
    assert text.count("scx_idlesteal: loaded") == 1, text[-2000:]
    # loaded with CPU 6 offline; then one rewrite per change, each within 100 ms
    assert "topology: 2 LLCs: 4 CPUs (node 0) 3 CPUs (node 0), online 0-5,7" in got, got
    hotplug = [l for l in got if l.startswith("hotplug: ")]
    assert len(hotplug) >= 1 + len(HOTPLUG_CPUS), got
    assert hotplug[-1].endswith("online 0-7"), hotplug
    final = scx.final_stats(text)
    assert int(final["hotplug"]) == 1 + 2 * len(HOTPLUG_CPUS), final
    assert int(final["steals"]) > 0, final
    states = lines(run, "hotplug_states")
    assert states and all(l.endswith("state enabled") for l in states), states


def test_no_ejection_before_the_deliberate_stall(run):
    before = console_before_mark(run)
    assert not scx.EJECTED.search(before), scx.EJECTED.search(before)
    assert "runnable task stall" not in before


def test_watchdog_limit_and_debug_dump(run):
    text = run.sections["dump"]
    assert "watchdog 1000 ms" in text, text[-2000:]
    assert "EXIT: runnable task stall" in text, text[-2000:]
    assert "DEBUG DUMP" in text, text[-2000:]
    dump = text[text.index("DEBUG DUMP"):]
    for want in ("idlesteal: steal=1", "idlesteal: steals=", "idlesteal: llc 0 ",
                 "idlesteal: queue=", "idlesteal: avg_idle_ns=", "allowed_on_task_cpu=1"):
        assert want in dump, (want, dump[:3000])
    ejected = scx.EJECTED.search(run.console.read_text(errors="replace"))
    assert ejected and sidebyside.ops_matches(ejected.group(1), "idlesteal"), ejected


# Programs outside the object's ops that the loader attaches where the
# kernel has their member (tools/scx_idlesteal/src/main.rs): veristat loads
# the object as it is and has no member to attach them to, so it cannot
# verify them on any kernel.  The kernel's verifier does when the loader
# loads them (test_cgroup_idle's "set" part needs it attached).
LOADER_SET_PROGS = {"idlesteal_cgroup_set_idle"}


def test_veristat_passes_every_program(run):
    rows = scx.parse_veristat(run.sections["veristat"])
    progs = {r["prog_name"]: r for r in rows}
    print("veristat: " + ", ".join(f"{n} {r['verdict']} {r['total_insns']} insns "
                                   f"{r['total_states']} states" for n, r in progs.items()))
    for want in ("idlesteal_dispatch", "idlesteal_enqueue", "idlesteal_select_cpu",
                 "idlesteal_init", "idlesteal_cgroup_init", *LOADER_SET_PROGS):
        assert want in progs, (want, sorted(progs))
    assert all(r["verdict"] == "success" for r in rows
               if r["prog_name"] not in LOADER_SET_PROGS), [
        (r["prog_name"], r["verdict"]) for r in rows if r["verdict"] != "success"]


def test_default_watchdog_limit_is_5_s(run):
    assert "watchdog 5000 ms" in run.sections["sync"], run.sections["sync"][-2000:]
