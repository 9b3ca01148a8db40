import sys, json, statistics
from pathlib import Path
from idlesteal.guest import image, topology, vm
from idlesteal.measure import schedstat, workload
preset = topology.get("2x2x2")
ini = image.build_base()
script = """
for c in 3 7; do for i in 1 2; do taskset -c $c sh -c 'while :; do :; done' & done; done
sleep 1
for r in 1 2 3; do
section s0.$r
schedsnap
section hb.$r
taskset -c 0-2,4-6 wakelat -m 3 -w 1 -u 0 -d 5
section s1.$r
schedsnap
done
"""
kern = {"before": Path("/tmp/before6-bzImage"), "after": Path("/tmp/after6-bzImage")}
res = {k: [] for k in kern}
for boot in range(int(sys.argv[1])):
    for k in (["before", "after"] if boot % 2 == 0 else ["after", "before"]):
        out = vm.run_script(script, preset, kern[k], ini, timeout=600, name=f"pinned-{k}")
        for r in (1, 2, 3):
            d = schedstat.delta(schedstat.parse(out.sections[f"s0.{r}"]), schedstat.parse(out.sections[f"s1.{r}"]))
            t = workload.get("wakelat").parse(out.sections[f"hb.{r}"])["rps"]
            res[k].append(dict(steal=d.totals["steal_tasks"], failed=d.totals["steal_failed"],
                               search_ms=d.totals["steal_search_ns"] / 1e6, per_attempt_us=d.totals["steal_search_ns"] / 1e3 / max(1, d.totals["steal_tasks"] + d.totals["steal_failed"]), rps=t))
for k, rows in res.items():
    print(k, len(rows), {f: (round(statistics.mean(r[f] for r in rows), 2), round(min(r[f] for r in rows), 2), round(max(r[f] for r in rows), 2)) for f in rows[0]})
Path("/tmp/pinned.json").write_text(json.dumps(res, indent=1))
