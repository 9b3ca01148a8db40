# Which part of scx_idlesteal costs 1x1x2 wakelat its requests (1
# messenger, 4 workers, 5 s, as configs/scx.suite): EEVDF and the loader
# with each of CONFIGS, rotated per round, ROUNDS rounds.  A config is
# "default", loader switches ("-o -p" as one word: -o+-p), or vNAME, the
# build /usr/bin/scx_idlesteal.vNAME (--file) as is.
#   python3 -m idlesteal boot --variant scx --preset 1x1x2 --no-build \
#     --file build/scx-scx/build/bin/scx_idlesteal:/usr/bin/scx_idlesteal \
#     --script results/scx/wakelat-knobs/knobs.sh --timeout 900
ROUNDS=${ROUNDS:-6}
CONFIGS=${CONFIGS:-"default -o -p -o+-p -k -f"}
r=1
while [ $r -le $ROUNDS ]; do
  echo "RUN eevdf $r $(wakelat -m 1 -w 4 -d 5 | grep '^RESULT')"
  for c in $CONFIGS; do
    b=scx_idlesteal; a=$(echo "$c" | tr + ' '); o=$a
    case $c in
      default) a= ;;
      v*) b=scx_idlesteal.$c; a= ;;
    esac
    scx_start /tmp/c.log $b -q $a > /dev/null || fail "did not load ($o)"
    echo "RUN scx[$o] $r $(wakelat -m 1 -w 4 -d 5 | grep '^RESULT')"
    scx_stop > /dev/null || fail "did not unload"
    grep -E "^final" /tmp/c.log | sed "s/^/FINAL scx[$o] $r /"
  done
  r=$((r + 1))
done
