# scx_idlesteal before and after its wake_clock()/wake_vtime() placement
# (fb2b401, 4b50be5, a5f9157), and EEVDF, in one 2x2x2 boot, interleaved,
# rotated, 8 rounds, no tracing: the cost the side by side of 2026-11-26
# suggested (hackbench 4 groups 1.60x EEVDF, sysbench threads 1.26x).  Run:
#   python3 -m idlesteal boot --variant scx --preset 2x2x2 --no-build \
#     --file build/scx-scx/build/bin/scx_idlesteal:/usr/bin/scx_idlesteal \
#     --file build/issue21-wd/scx_idlesteal.old:/usr/bin/scx_idlesteal.old \
#     --tools sysbench \
#     --script results/scx/wake-clock/exp.sh
# The old loader: the one kept from before fb2b401 (the "old loader" of
# results/scx/root-sleeper/, built 11:07 on 2026-11-26, source 3d5842d).
# Lines: "RES SCHED WORKLOAD ROUND SECONDS".
one() {   # one SCHED ROUND
  case $1 in
  old) scx_start /tmp/o.log scx_idlesteal.old > /dev/null || fail "old did not load" ;;
  new) scx_start /tmp/n.log scx_idlesteal > /dev/null || fail "new did not load" ;;
  esac
  hackbench -g 4 -l 100 > /dev/null                      # warm-up
  t=$(hackbench -g 4 -l 100 | awk '/^Time:/ {print $2}')
  echo "RES $1 hackbench-4 $2 $t"
  s=$(sysbench threads --threads=8 --events=1000 --time=0 run |
      awk '/total time:/ {sub("s","",$3); print $3}')
  echo "RES $1 sysbench-threads-8 $2 $s"
  [ $1 = eevdf ] || scx_stop > /dev/null || fail "$1 did not unload"
}
for r in 1 2 3 4 5 6 7 8; do
  case $((r % 3)) in
  0) o="eevdf old new" ;;
  1) o="old new eevdf" ;;
  2) o="new eevdf old" ;;
  esac
  for s in $o; do one $s $r; done
done
echo "state $(cat /sys/kernel/sched_ext/state)"
