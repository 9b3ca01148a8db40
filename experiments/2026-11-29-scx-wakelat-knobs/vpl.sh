# 1x1x2 wakelat: EEVDF, the loader as is, vpl (vpl.diff: a wakeup preempts
# only the task of its own CPU, never one of another CPU of the LLC) and
# the loader with -p (no wakeup preemption), 8 rounds, by knobs.sh.
#   python3 -m idlesteal boot --variant scx --preset 1x1x2 --no-build \
#     --file build/scx-scx/build/bin/scx_idlesteal:/usr/bin/scx_idlesteal \
#     --file build/wd/scx_idlesteal.vpl:/usr/bin/scx_idlesteal.vpl \
#     --file results/scx/wakelat-knobs/knobs.sh:/root/knobs.sh \
#     --script results/scx/wakelat-knobs/vpl.sh --timeout 900
ROUNDS=8
CONFIGS="default vpl -p"
. /root/knobs.sh
