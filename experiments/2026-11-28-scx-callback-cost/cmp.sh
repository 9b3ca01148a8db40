# Two builds by cost.sh, 4 rounds: the loader before any_idle_for() (cur)
# and with it (vidle), each put into the image with --file (README of
# ../vidle-same-boot/; command in ../../README.md, "What each callback costs").
ROUNDS=4
LOADERS="scx_idlesteal.cur scx_idlesteal.vidle"
. /usr/local/lib/cost.sh
