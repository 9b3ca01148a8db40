#!/bin/sh
# idlesteal guest init: mount, run /run.sh with output on ttyS1, power off.
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev 2>/dev/null
mount -t debugfs debugfs /sys/kernel/debug
mount -t cgroup2 cgroup2 /sys/fs/cgroup
mount -t tmpfs tmpfs /tmp
mkdir -p /dev/pts /dev/shm
mount -t tmpfs tmpfs /dev/shm
out=/dev/ttyS1
stty -F $out raw -echo 2>/dev/null
echo "idlesteal-init: running /run.sh" > /dev/console
# The harness's timeout for the script, less a margin (vm.py puts it in the
# run's archive): then the hang report goes to the console, from a
# SCHED_FIFO task that runs whatever the other tasks' scheduler does.
if read -r hang_s < /etc/idlesteal/hang-report-s 2>/dev/null; then
    rtrun 1 /bin/sh -c "sleep $hang_s && . /lib/idlesteal.sh && hang_report" \
        > /dev/console 2>&1 &
fi
{
    echo "@@IDLESTEAL BEGIN@@"
    if [ -f /run.sh ]; then
        /bin/sh -c '. /lib/idlesteal.sh; . /run.sh' < /dev/null
        rc=$?
    else
        echo "idlesteal-init: no /run.sh in the initramfs"
        rc=127
    fi
    echo "@@IDLESTEAL END rc=$rc@@"
} > $out 2>&1
echo "idlesteal-init: done" > /dev/console
sync
reboot -f
sleep 5
poweroff -f
