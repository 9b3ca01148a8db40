"""What a run samples (like mmtests' monitors, each attachable to any run):
the workloads' output parsers, /proc/schedstat, /proc/stat, KTAP, KCSAN,
lock_stat, the wasted-CPU-time measure and its trace, the overload masks,
the run records and the statistics."""
