# Where the guest's CPU time goes during 8 pipe pairs on 2x2x2, EEVDF and
# scx_idlesteal in turn, ROUNDS rounds: perf record -a (cpu-clock, guest
# time) and the top symbols (kernel, and the BPF programs by name).
#   python3 -m idlesteal boot --variant scx --preset 2x2x2 --no-build --tools perf \
#     --file build/scx-scx/build/bin/scx_idlesteal:/usr/bin/scx_idlesteal \
#     --script results/scx/pipe-profile/prof.sh --timeout 1200
N=$(nproc)
ROUNDS=${ROUNDS:-2}
echo 0 > /proc/sys/kernel/kptr_restrict
echo -1 > /proc/sys/kernel/perf_event_paranoid
pipes() {
  p=; for i in $(seq $N); do perf bench sched pipe -l 5000 > /tmp/pp.$i & p="$p $!"; done
  for j in $p; do wait $j; done
  cat /tmp/pp.* | awk '/usecs\/op/ {s += $1; n++} END {printf "pipes mean_us_op %.2f\n", s / n}'
}
r=1
while [ $r -le $ROUNDS ]; do
  for s in eevdf scx_idlesteal; do
    if [ $s = scx_idlesteal ]; then
      scx_start /tmp/l.log scx_idlesteal -q > /dev/null || fail "no load"
    fi
    perf record -q -a -e cpu-clock -F 1000 -o /tmp/perf.data -- sleep 1000 > /dev/null 2>&1 &
    rec=$!
    sleep 1
    echo "RUN $s $r $(pipes)"
    kill -INT $rec; wait $rec
    [ $s = scx_idlesteal ] && { scx_stop > /dev/null || fail "no unload"; }
    perf report -i /tmp/perf.data --no-children --sort sym --stdio 2>/dev/null \
      | grep -v '^#' | grep -v '^$' | head -45 | sed "s/^/PROF $s $r /"
  done
  r=$((r + 1))
done
