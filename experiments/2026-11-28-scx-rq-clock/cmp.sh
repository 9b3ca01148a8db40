# Two builds by ../callback-cost/cost.sh, 4 rounds: the loader of HEAD
# before the change (head) and with its per-callback time stamps taken by
# scx_bpf_now() instead of bpf_ktime_get_ns() (vnow), each put into the
# image with --file (command in README.md).
echo "clocksource $(cat /sys/devices/system/clocksource/clocksource0/current_clocksource)"
ROUNDS=4
LOADERS="scx_idlesteal.head scx_idlesteal.vnow"
. /usr/local/lib/cost.sh
