# Why steal searches fail on 1x1x2 wakelat (1 messenger, 4 workers, 5 s,
# as configs/scx.suite): the diagnostic loader vdiag.diff (counters reused,
# see README.md), ROUNDS rounds, the loader started per run.
#   python3 -m idlesteal boot --variant scx --preset 1x1x2 --no-build \
#     --file build/wd/scx_idlesteal.vdiag:/usr/bin/scx_idlesteal \
#     --script results/scx/failed-search/diag.sh --timeout 600
ROUNDS=${ROUNDS:-3}
W=${W:-"-m 1 -w 4 -d 5"}
r=1
while [ $r -le $ROUNDS ]; do
  scx_start /tmp/c.log scx_idlesteal -q > /dev/null || fail "did not load"
  echo "RUN vdiag wakelat $r $(wakelat $W | grep '^RESULT')"
  scx_stop > /dev/null || fail "did not unload"
  grep -E "^final" /tmp/c.log | sed "s/^/vdiag wakelat $r /"
  r=$((r + 1))
done
