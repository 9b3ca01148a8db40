# What scx_idlesteal's callbacks cost on 1x1x2 wakelat (1 messenger, 4
# workers, 5 s, as configs/scx.suite), ROUNDS rounds, the loader started
# per run with --cost; EEVDF's requests in the same boot for reference.
#   python3 -m idlesteal boot --variant scx --preset 1x1x2 --no-build \
#     --file build/scx-scx/build/bin/scx_idlesteal:/usr/bin/scx_idlesteal \
#     --script results/scx/run-min/cost.sh --timeout 900
ROUNDS=${ROUNDS:-4}
r=1
while [ $r -le $ROUNDS ]; do
  echo "RUN eevdf wakelat $r $(wakelat -m 1 -w 4 -d 5 | grep '^RESULT')"
  scx_start /tmp/c.log scx_idlesteal --cost -q > /dev/null || fail "did not load"
  echo "RUN scx_idlesteal wakelat $r $(wakelat -m 1 -w 4 -d 5 | grep '^RESULT')"
  scx_stop > /dev/null || fail "did not unload"
  grep -E "^(cost|final)" /tmp/c.log | sed "s/^/scx_idlesteal wakelat $r /"
  r=$((r + 1))
done
