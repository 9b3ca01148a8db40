# 1x1x2 wakelat (1 messenger, 4 workers, 5 s): EEVDF, the loader as is,
# vpl (vpl.diff: a wakeup preempts only the task of its own CPU, never
# one of another CPU of the LLC) and the loader with -p (no wakeup
# preemption), rotated per round, ROUNDS rounds.
#   python3 -m idlesteal boot --variant scx --preset 1x1x2 --no-build \
#     --file build/scx-scx/build/bin/scx_idlesteal:/usr/bin/scx_idlesteal \
#     --file build/wd/scx_idlesteal.vpl:/usr/bin/scx_idlesteal.vpl \
#     --script results/scx/wakelat-knobs/vpl.sh --timeout 900
ROUNDS=${ROUNDS:-8}
r=1
while [ $r -le $ROUNDS ]; do
  echo "RUN eevdf $r $(wakelat -m 1 -w 4 -d 5 | grep '^RESULT')"
  for o in default vpl -p; do
    case $o in
      default) b=scx_idlesteal; a= ;;
      vpl) b=scx_idlesteal.vpl; a= ;;
      *) b=scx_idlesteal; a=$o ;;
    esac
    scx_start /tmp/c.log $b -q $a > /dev/null || fail "did not load ($o)"
    echo "RUN scx[$o] $r $(wakelat -m 1 -w 4 -d 5 | grep '^RESULT')"
    scx_stop > /dev/null || fail "did not unload"
    grep -E "^final" /tmp/c.log | sed "s/^/FINAL scx[$o] $r /"
  done
  r=$((r + 1))
done
