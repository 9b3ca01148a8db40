#!/bin/sh
# schbench's first STEAL A/B (README.md): the `scx` kernel (the series with
# sched_ext; EEVDF here), 2x2x2, one boot per line, sides interleaved.
set -e
D=experiments/2026-12-03-schbench-first
B="/usr/bin/python3 -m idlesteal bench --variant scx --no-build --preset 2x2x2 --reps 5 --outdir $D"
$B --workload schbench-storm --levels 1,2 --size 3 --name storm-dd
$B --workload schbench-storm --levels 1,2 --size 3 --name storm-nodd \
    --a "NO_STEAL NO_DELAY_DEQUEUE" --b "STEAL NO_DELAY_DEQUEUE"
$B --workload schbench --levels 1,2,4 --size 3 --name latency-dd
