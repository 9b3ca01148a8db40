# One line per CPU and per node, and the online mask: topology.verify() reads them.
for d in /sys/devices/system/cpu/cpu[0-9]*; do
    n=${d##*/cpu}
    smt=$(cat $d/topology/thread_siblings_list 2>/dev/null || echo -)
    llc=$(cat $d/cache/index3/shared_cpu_list 2>/dev/null || echo -)
    pkg=$(cat $d/topology/physical_package_id 2>/dev/null || echo -)
    echo "cpu $n smt=$smt llc=$llc pkg=$pkg"
done
for d in /sys/devices/system/node/node[0-9]*; do
    [ -d "$d" ] && echo "node ${d##*/node} cpus=$(cat $d/cpulist)"
done
echo "online $(cat /sys/devices/system/cpu/online)"
