# Where the cost of exp.sh comes from: scx_idlesteal as now with and
# without wakeup preemption (-p), the old loader, EEVDF; hackbench -g 4
# only, one 2x2x2 boot, 8 rounds, order rotated.  Run as exp.sh (same
# --file lines, no --tools).  Lines: "RES SCHED hackbench-4 ROUND SECONDS".
one() {   # one SCHED ROUND
  case $1 in
  old) scx_start /tmp/o.log scx_idlesteal.old > /dev/null || fail "old did not load" ;;
  new) scx_start /tmp/n.log scx_idlesteal > /dev/null || fail "new did not load" ;;
  new-p) scx_start /tmp/p.log scx_idlesteal -p > /dev/null || fail "new -p did not load" ;;
  esac
  hackbench -g 4 -l 100 > /dev/null                      # warm-up
  t=$(hackbench -g 4 -l 100 | awk '/^Time:/ {print $2}')
  echo "RES $1 hackbench-4 $2 $t"
  [ $1 = eevdf ] || scx_stop > /dev/null || fail "$1 did not unload"
}
for r in 1 2 3 4 5 6 7 8; do
  case $((r % 4)) in
  0) o="eevdf old new new-p" ;;
  1) o="old new new-p eevdf" ;;
  2) o="new new-p eevdf old" ;;
  3) o="new-p eevdf old new" ;;
  esac
  for s in $o; do one $s $r; done
done
echo "state $(cat /sys/kernel/sched_ext/state)"
