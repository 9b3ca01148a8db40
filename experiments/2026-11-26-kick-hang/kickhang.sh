F=/sys/kernel/debug/sched/features
mount -t debugfs none /sys/kernel/debug 2>/dev/null
echo STEAL > $F; echo STEAL_KICK > $F
grep -o "STEAL[A-Z_]*" $F | tr '\n' ' '; echo
end=$(( $(cut -d. -f1 /proc/uptime) + 700 ))
i=0
while [ $(cut -d. -f1 /proc/uptime) -lt $end ]; do
  hackbench -T -p -g 2 -l 200 > /dev/null || echo "hackbench failed"
  hackbench -g 4 -l 100 > /dev/null || echo "hackbench failed"
  i=$((i+1))
done
echo "rounds $i"
grep -E "steal_kick" /sys/kernel/debug/sched/debug | awk '{s[$1]+=$3} END {for (k in s) print k, s[k]}'
dmesg | grep -iE "lockdep|circular|deadlock|BUG|WARNING|stall|lockup" | head -20
echo done
