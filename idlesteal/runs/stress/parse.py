"""Stress suite: the guest's sections read into numbers.

The workers' closing counter lines ('name key=value ...'), the msgcount /
affinity_check / wakelat runs as guest/stress.sh logs them (with what makes
one a problem: RunRecord.problems()), and the throttled cgroup's cpu.stat.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass

_KV = re.compile(r"(\w+)=(-?\d+)")


def parse_counters(text: str) -> dict[str, dict[str, int]]:
    """'name key=value ...' lines -> {name: {key: value}}; 'name missing'
    gives {name: {"missing": 1}}."""
    out: dict[str, dict[str, int]] = {}
    for line in text.splitlines():
        tok = line.split()
        if not tok:
            continue
        name = tok[0]
        if tok[1:] == ["missing"]:
            out[name] = {"missing": 1}
            continue
        out[name] = {k: int(v) for k, v in _KV.findall(line)}
    return out


@dataclass
class RunRecord:
    """One msgcount / affinity_check run as the guest logged it."""
    kind: str                  # MSGCOUNT, AFFINITY or WAKELAT
    worker: str
    rc: int
    expect: int | None
    result: dict | None        # the RESULT json, None when missing/garbled

    def problems(self) -> list[str]:
        what = f"{self.kind.lower()} {self.worker}".strip()
        if self.result is None:
            return [f"{what}: no RESULT line (rc={self.rc})"]
        r = self.result
        out = []
        if self.rc != 0:
            out.append(f"{what}: exit code {self.rc}")
        if self.kind == "MSGCOUNT":
            sent, recv = r.get("sent"), r.get("received")
            if sent != recv or (self.expect is not None and sent != self.expect):
                out.append(f"{what}: sent {sent}, received {recv}, expected {self.expect}")
            for k in ("errors", "seq_gaps", "seq_backwards", "malformed", "payload_errors"):
                if r.get(k, 0):
                    out.append(f"{what}: {k}={r[k]}")
            if r.get("timeout") or r.get("system_error"):
                out.append(f"{what}: timeout={r.get('timeout')} system_error={r.get('system_error')}")
        elif self.kind == "AFFINITY":
            if r.get("violations", 0):
                out.append(f"{what}: {r['violations']} affinity violation(s)")
        elif self.kind == "WAKELAT":
            if r.get("stalled"):
                out.append(f"{what}: stalled (a worker unanswered past the grace after "
                           f"{r.get('seconds')} s; longest answered wakeup "
                           f"{r.get('lat_max_us', 0) / 1e6:.1f} s)")
            elif not r.get("samples", 1):
                out.append(f"{what}: no request completed in {r.get('seconds')} s")
        return out


_RUN_RE = re.compile(r"^(MSGCOUNT|AFFINITY|WAKELAT)\s+(?:(\S+)\s+)??rc=(-?\d+)(?:\s+expect=(\d+))?"
                     r"(?:\s+RESULT\s+(\{.*\}))?\s*$")


def parse_runs(text: str) -> list[RunRecord]:
    runs = []
    for line in text.splitlines():
        m = _RUN_RE.match(line.strip())
        if not m:
            continue
        try:
            result = json.loads(m.group(5)) if m.group(5) else None
        except ValueError:
            result = None
        runs.append(RunRecord(m.group(1), m.group(2) or "", int(m.group(3)),
                              int(m.group(4)) if m.group(4) else None, result))
    return runs


def parse_cpustat(text: str) -> dict[str, int]:
    out = {}
    for line in text.splitlines():
        tok = line.split()
        if len(tok) == 2 and tok[1].lstrip("-").isdigit():
            out[tok[0]] = int(tok[1])
    return out
