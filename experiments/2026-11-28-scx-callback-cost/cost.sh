# What each of scx_idlesteal's BPF callbacks costs, in guest time (the
# kernel's BPF run-time statistics: scx_idlesteal --cost), for the bench
# cells' workloads with one pipe pair / hackbench group / sysbench thread
# per CPU, ROUNDS rounds each, the loader started per run.  LOADERS: the
# builds to compare (/usr/bin/scx_idlesteal.NAME), rotated per round.
#   python3 -m idlesteal boot --variant scx --preset 1x1x2 --no-build --tools perf,sysbench \
#     --file build/scx-scx/build/bin/scx_idlesteal:/usr/bin/scx_idlesteal \
#     --script results/scx/callback-cost/cost.sh --timeout 1500
N=$(nproc)
ROUNDS=${ROUNDS:-3}
LOADERS=${LOADERS:-scx_idlesteal}
pipes() {
  p=; for i in $(seq $N); do perf bench sched pipe -l 5000 > /tmp/pp.$i & p="$p $!"; done
  for j in $p; do wait $j; done
  cat /tmp/pp.* | awk '/usecs\/op/ {s += $1; n++} END {printf "pipes mean_us_op %.2f\n", s / n}'
}
hb() { hackbench -g $N -l 100 | awk '/^Time:/ {print "hackbench s " $2}'; }
sbt() { sysbench threads --threads=$N --events=1000 --time=0 run | awk '/total time:/ {print "sysbench_threads s " $3}'; }
r=1
while [ $r -le $ROUNDS ]; do
  for w in pipes hb sbt; do
    for l in $LOADERS; do
      scx_start /tmp/c.log $l --cost -q > /dev/null || fail "$l did not load"
      echo "RUN $l $w $r $($w)"
      scx_stop > /dev/null || fail "$l did not unload"
      grep -E "^(cost|final)" /tmp/c.log | sed "s/^/$l $w $r /"
    done
  done
  set -- $LOADERS; first=$1; shift; LOADERS="$* $first"
  r=$((r + 1))
done
