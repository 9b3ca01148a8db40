# scx_idlesteal before (flat cgroup weights, HEAD~ of the nested-weights
# commit) and after (hierarchical), in one 2x2x2 boot, rounds interleaved
# (docs/scx.md, "Cgroup weights").  Run:
#   python3 -m idlesteal boot --variant scx --preset 2x2x2 --no-build \
#     --file build/scx_idlesteal.old:/usr/bin/scx_idlesteal.old \
#     --file build/scx-scx/build/bin/scx_idlesteal:/usr/bin/scx_idlesteal \
#     --script results/scx/nested-cgroups/exp.sh
# Each round and loader:
#   nested: a (100) with a/x (100) and a/y (300), beside b (100), 8 spinners
#     in each of x, y, b; cgshare: the CPUs each got over 6 s.
#   extreme: light (1) and heavy (10000), children of the root, 8 spinners
#     each, a sleeper of the root (sleeplat, 100 ms period, 6 s): its wait
#     at each wakeup.  Nothing here is below the root's children, so the
#     change should not show.
CG=/sys/fs/cgroup
mount -t cgroup2 none $CG 2>/dev/null
echo "+cpu" > $CG/cgroup.subtree_control
mkdir -p $CG/a $CG/b $CG/light $CG/heavy
echo "+cpu" > $CG/a/cgroup.subtree_control
mkdir -p $CG/a/x $CG/a/y
echo 100 > $CG/a/cpu.weight; echo 100 > $CG/b/cpu.weight
echo 100 > $CG/a/x/cpu.weight; echo 300 > $CG/a/y/cpu.weight
echo 1 > $CG/light/cpu.weight; echo 10000 > $CG/heavy/cpu.weight
spin() { sh -c "echo \$\$ > $CG/$1/cgroup.procs; exec hogs -n 8 -w 0 -d $2" > /dev/null & }
nested() {
  pids=
  for g in a/x a/y b; do spin $g 10; pids="$pids $!"; done
  cgshare -w 2 -d 6 $CG/a/x $CG/a/y $CG/b | grep RESULT | sed "s/^/nested $1 $2 /"
  wait $pids
}
extreme() {
  spin light 10; a=$!
  spin heavy 10; b=$!
  sleep 1
  sleeplat -n 0 -p 100000 -w 1 -d 6 | grep RESULT | sed "s/^/root-sleeper $1 $2 /"
  wait $a $b
}
for round in 1 2 3; do
  for bin in scx_idlesteal.old scx_idlesteal; do
    scx_start /tmp/x.log $bin || continue
    nested $bin $round
    extreme $bin $round
    scx_stop
  done
done
