#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# cpuset-partition-hotplug.sh - CPU hotplug alone leaves a populated cgroup
# v2 partition root and the top cpuset holding the same CPU, and the next
# sched-domain rebuild warns ("Cgroup v2 shouldn't pass down overlapping
# partition root cpusets", generate_sched_domains()).
#
#   sh cpuset-partition-hotplug.sh [A B]      (default: the two highest CPUs)
#
# Needs root, cgroup v2 at /sys/fs/cgroup, CPUs A and B hotpluggable (not
# CPU 0) and idle enough to go offline.  Prints the cpusets after each step;
# exit 1 when a CPU ends up in both the top cpuset and the valid partition.
set -eu
cg=/sys/fs/cgroup
last=$(ls -d /sys/devices/system/cpu/cpu[0-9]* | sed 's/.*cpu//' | sort -n | tail -1)
A=${1:-$((last - 1))}
B=${2:-$last}
P=$cg/partition-hotplug
# a cpuset list file ("0-5,7") one CPU a line
cpus() { tr ',' '\n' < "$1" | while IFS=- read -r lo hi; do seq "$lo" "${hi:-$lo}"; done; }
online() { echo "$2" > "/sys/devices/system/cpu/cpu$1/online"; }
show() {
	echo "$1: top=$(cat $cg/cpuset.cpus.effective)" \
	     "P=$(cat $P/cpuset.cpus.effective) partition='$(cat $P/cpuset.cpus.partition)'"
}

grep -qw cpuset $cg/cgroup.subtree_control || echo +cpuset > $cg/cgroup.subtree_control
mkdir $P
echo "$A,$B" > $P/cpuset.cpus
echo root > $P/cpuset.cpus.partition
sleep 3600 &
task=$!
echo $task > $P/cgroup.procs
show "root      "
online "$A" 0; show "A offline "
online "$B" 0; show "B offline "
online "$A" 1; show "A online  "
online "$B" 1; show "B online  "

rc=0
if [ "$(cat $P/cpuset.cpus.partition)" = root ]; then
	for c in $(cpus $P/cpuset.cpus.effective); do
		if cpus $cg/cpuset.cpus.effective | grep -qx "$c"; then
			echo "overlap: CPU $c is in the top cpuset and in the partition"
			rc=1
		fi
	done
fi
kill $task; wait $task 2>/dev/null || true
echo member > $P/cpuset.cpus.partition
rmdir $P
dmesg | grep -A3 'WARNING.*cpuset' || true
exit $rc
