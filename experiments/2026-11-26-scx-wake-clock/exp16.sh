# Why does the per-CPU clock cost hackbench 4 groups?  exp10-exp14: with
# wake_clock() returning vtime_now ("vnow") hackbench 4 groups takes
# 0.66x the time of the loader as it is ("cur"), but the root sleeper at
# 1:10,000 starves.  A guess: the CPU's clock puts a task of a
# message-passing load that wakes ahead of its CPU's queue, so each
# message runs a receiver at once and no sender fills a pipe first:
# more context switches per message.  Counted here, in guest terms: the
# context switches and migrations of the whole machine (perf stat -a,
# software events) over each hackbench run.  EEVDF, cur, vnow, 6 rounds
# rotated.  One 2x2x2 boot.  Loaders from mkvar.py (build/wd/, not in git):
#   python3 results/scx/wake-clock/mkvar.py cur -
#   python3 results/scx/wake-clock/mkvar.py vnow results/scx/wake-clock/vnow.diff
#   python3 -m idlesteal boot --variant scx --preset 2x2x2 --no-build --tools perf \
#     --file build/wd/scx_idlesteal.cur:/usr/bin/scx_idlesteal.cur \
#     --file build/wd/scx_idlesteal.vnow:/usr/bin/scx_idlesteal.vnow \
#     --script results/scx/wake-clock/exp16.sh --timeout 1500
# Lines: "RES SCHED hackbench-4 ROUND SECONDS", "CNT SCHED ROUND cs N mig N",
# "LOG SCHED stats ..." (the loader's last counters line: its totals).
hb() {
  perf stat -a -x, -e context-switches,cpu-migrations -o /tmp/ps.txt \
    hackbench -g 4 -l 100 | awk '/^Time:/ {print $2}'
}
run() {   # SCHED COMMAND...
  s=$1; shift
  if [ $s != eevdf ]; then scx_start /tmp/$s.log scx_idlesteal.$s > /dev/null || fail "$s did not load"; fi
  "$@"
  if [ $s != eevdf ]; then
    scx_stop > /dev/null || fail "$s did not unload"
    echo "LOG $s $(grep "^stats" /tmp/$s.log | tail -n 1)"
  fi
}
one() {
  t=$(hb)
  cs=$(awk -F, '$3 == "context-switches" {print $1}' /tmp/ps.txt)
  mig=$(awk -F, '$3 == "cpu-migrations" {print $1}' /tmp/ps.txt)
  echo "RES $1 hackbench-4 $2 $t"
  echo "CNT $1 $2 cs $cs mig $mig"
}
set -- eevdf cur vnow
for r in 1 2 3 4 5 6; do
  for s in "$@"; do run $s one $s $r; done
  first=$1; shift; set -- "$@" $first
done
echo "state $(cat /sys/kernel/sched_ext/state)"
