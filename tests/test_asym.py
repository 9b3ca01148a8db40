"""Asymmetric-capacity arm64 pieces that need no guest: device tree edit,
topology check, scripts, summary; arm64 build/image plumbing."""
from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from idlesteal.runs import asym, misfit
from idlesteal.kernel import build
from idlesteal.guest import image
from idlesteal.measure import schedstat

P = asym.get("asym2b2l")
DATA = Path(__file__).parent / "data"

# What QEMU 7.2's virt machine writes for -smp 4,cores=2,threads=2 (trimmed).
QEMU_DTS = """/dts-v1/;

/ {
	cpus {
		#size-cells = <0x00>;
		#address-cells = <0x01>;

		cpu-map {

			socket0 {

				cluster0 {

					core0 {

						thread0 {
							cpu = <0x8004>;
						};

						thread1 {
							cpu = <0x8003>;
						};
					};

					core1 {

						thread0 {
							cpu = <0x8002>;
						};

						thread1 {
							cpu = <0x8001>;
						};
					};
				};
			};
		};

		cpu@0 {
			phandle = <0x8004>;
			reg = <0x00>;
			device_type = "cpu";
		};

		cpu@1 {
			phandle = <0x8003>;
			reg = <0x01>;
			device_type = "cpu";
		};

		cpu@2 {
			phandle = <0x8002>;
			reg = <0x02>;
			device_type = "cpu";
		};

		cpu@3 {
			phandle = <0x8001>;
			reg = <0x03>;
			device_type = "cpu";
		};
	};
};
"""


def _without_map(dts: str) -> str:
    out = re.sub(r"\t\tcpu-map \{.*?\n\t\t\};\n", "", dts, flags=re.S)
    out = re.sub(r"\t\t\tphandle = <0x[0-9a-f]+>;\n", "", out)
    assert "cpu-map" not in out and "phandle" not in out
    return out


def test_preset_numbering_and_capacities():
    assert P.ncpus == 8 and P.cores == 4
    assert P.smt_groups() == [[0, 1], [2, 3], [4, 5], [6, 7]]
    assert P.big_cpus() == [0, 1, 2, 3]
    assert P.capacities() == {0: 1024, 1: 1024, 2: 1024, 3: 1024, 4: 512, 5: 512, 6: 512, 7: 512}
    args = P.machine_args()
    assert "8,sockets=1,clusters=1,cores=4,threads=2" in args and "virt,gic-version=3" in args


def test_patch_dts_adds_capacities_keeps_qemu_cpu_map():
    small = asym.get("asym1b1l")
    text = asym.patch_dts(QEMU_DTS, small)
    caps = re.findall(r"capacity-dmips-mhz = <(0x[0-9a-f]+)>;", text)
    assert [int(c, 16) for c in caps] == [1024, 1024, 512, 512]
    assert text.count("cpu-map {") == 1


def test_patch_dts_writes_cpu_map_when_missing():
    small = asym.get("asym1b1l")
    text = asym.patch_dts(_without_map(QEMU_DTS), small)
    assert text.count("cpu-map {") == 1
    handles = dict(re.findall(r"cpu@(\d+) \{\n\s*capacity-dmips-mhz = <\S+>;\n\s*phandle = <(\S+)>;",
                              text))
    assert len(handles) == 4
    core1 = re.search(r"core1 \{\s*thread0 \{\s*cpu = <(\S+)>;\s*\};\s*thread1 \{\s*cpu = <(\S+)>;",
                      text)
    assert core1 and core1.groups() == (handles["2"], handles["3"])


@pytest.mark.skipif(shutil.which("dtc") is None, reason="dtc (device-tree-compiler) missing")
def test_patched_dts_compiles(tmp_path):
    small = asym.get("asym1b1l")
    for src in (QEMU_DTS, _without_map(QEMU_DTS)):
        f = tmp_path / "t.dts"
        f.write_text(asym.patch_dts(src, small))
        subprocess.run(["dtc", "-q", "-I", "dts", "-O", "dtb", "-o", str(tmp_path / "t.dtb"),
                        str(f)], check=True)


def test_patch_dts_rejects_wrong_cpu_count():
    with pytest.raises(asym.HarnessError):
        asym.patch_dts(QEMU_DTS, P)


ASYM = "SD_BALANCE_NEWIDLE SD_ASYM_CPUCAPACITY SD_ASYM_CPUCAPACITY_FULL SD_WAKE_AFFINE"


def _guest_text(caps=None, mc_flags=ASYM, smt_name="SMT") -> str:
    caps = caps or P.capacities()
    lines = []
    for c in range(8):
        sib = f"{c & ~1}-{c | 1}"
        lines.append(f"cpu {c} smt={sib} cap={caps[c]}")
        lines.append(f"sd {c} 0 {smt_name} SD_SHARE_CPUCAPACITY SD_BALANCE_NEWIDLE")
        lines.append(f"sd {c} 1 MC {mc_flags}")
    lines.append("online 0-7")
    return "\n".join(lines) + "\n"


def test_verify_accepts_expected_topology():
    obs = asym.verify(P, _guest_text())
    assert obs.cap[7] == 512 and obs.smt[5] == [4, 5]
    assert obs.domains[0][1][0] == "MC"


def test_verify_rejects_equal_capacities():
    with pytest.raises(asym.AsymTopologyError, match="cpu_capacity"):
        asym.verify(P, _guest_text(caps={c: 1024 for c in range(8)}))


def test_verify_rejects_missing_asym_domain_and_smt():
    with pytest.raises(asym.AsymTopologyError, match="SD_ASYM_CPUCAPACITY"):
        asym.verify(P, _guest_text(mc_flags="SD_BALANCE_NEWIDLE"))
    with pytest.raises(asym.AsymTopologyError, match="SMT"):
        asym.verify(P, _guest_text(smt_name="MC"))


def test_parse_results_and_summary_table():
    rec = {"threads": 2, "rounds": 10, "stacked_rounds": 3, "stacked_pairs": 3,
           "stacked_rounds_end": 0, "migrated": 1}
    text = "placement: ...\nRESULT " + __import__("json").dumps(rec) + "\n"
    assert asym.parse_results(text) == [rec]
    samples = {"without": {2: [rec, dict(rec, stacked_rounds=5)]},
               "with": {2: [dict(rec, stacked_rounds=0), dict(rec, stacked_rounds=1)]}}
    rows = asym.summarize(samples, 10)
    assert rows[0]["without.stacked_rounds"]["mean"] == 4.0
    assert rows[0]["with.stacked_rounds"]["values"] == [0, 1]
    meta = {"preset": P.describe(), "rounds": 10, "runs_per_boot": 1, "boots_per_kernel": 2,
            "spin_ms": 5, "idle_ms": 20,
            "kernels": {"with": {"commit": "a" * 40}, "without": {"commit": "b" * 40}}}
    t = asym.table(rows, meta)
    assert "4.0 ± 1.4" in t and "0.5 ± 0.7" in t


def test_scripts_run_placement_and_snippet():
    s = asym.smoke_script(P, 2, 20)
    assert "placement -n 2 -r 20" in s and "section topology" in s and "NO_TTWU_QUEUE" in s
    b = asym.bench_script([2, 4], 50, 2, 5, 20)
    assert b.count("placement -n 4 -r 50") == 2 and "section place.n2.r1" in b


def test_qemu_command_arm64(tmp_path, monkeypatch):
    monkeypatch.setattr(asym, "make_dtb", lambda p: tmp_path / "x.dtb")
    cmd = P.qemu_command(tmp_path / "Image", tmp_path / "rd", tmp_path / "c", tmp_path / "o", ["x=1"])
    assert cmd[0] == "qemu-system-aarch64"
    assert cmd[cmd.index("-dtb") + 1] == str(tmp_path / "x.dtb")
    assert "virtconsole,chardev=idlesteal-out" in cmd
    assert "console=ttyAMA0" in cmd[cmd.index("-append") + 1]


def test_arm64_variant_and_make_cmd(tmp_path):
    assert build.arch_of("arm64") == "arm64"
    assert build.arch_of("steal") == "x86_64"
    cmd = build.make_cmd(tmp_path, tmp_path / "o", "Image", jobs=2, arch="arm64")
    assert "ARCH=arm64" in cmd and "CROSS_COMPILE=aarch64-linux-gnu-" in cmd
    assert "CC=ccache aarch64-linux-gnu-gcc" in cmd
    x86 = build.make_cmd(tmp_path, tmp_path / "o", "bzImage", jobs=2)
    assert "CC=ccache gcc" in x86 and not any(a.startswith("ARCH=") for a in x86)


def test_arm64_config_is_a_variant_with_checked_fragments():
    frags = build.fragments_for("arm64")
    assert [f.name for f in frags] == ["arm64.config", "steal.config"]
    text = frags[0].read_text()
    assert "CONFIG_SERIAL_AMBA_PL011_CONSOLE=y" in text and "CONFIG_SCHED_SMT=y" in text


def test_arm64_init_uses_virtio_console_and_installs_applets():
    text = image.init_script("/dev/hvc0", install_applets=True)
    assert "out=/dev/hvc0" in text and "/dev/ttyS1" not in text
    assert text.index("busybox --install -s") < text.index("export PATH=")
    assert image.init_script() == image.INIT


def test_race_layout():
    p = asym.get("asym2b2l")
    wakers, parks = p.race_cpus()
    assert wakers == [5, 6] and parks == [1, 4]
    assert not set(wakers) & set(p.big_cpus())
    text = asym.bench_script([2], 10, 1, 30, 5, (wakers, parks))
    assert "placement -n 2 -r 10 -s 30 -i 5 -W 5,6 -P 1,4 || fail placement" in text
    assert "-W" not in asym.bench_script([2], 10, 1, 30, 5)


def test_misfit_script_alternates_features_and_frees_the_hogs():
    s = misfit.script(P, seconds=2, rounds=2)
    feats = re.findall(r"^echo (\w+) > /sys/kernel/debug/sched/features$", s, re.M)
    assert feats == ["NO_NI_RANDOM", "NO_STEAL", "STEAL", "NO_STEAL", "STEAL"]
    assert s.index("echo NO_NI_RANDOM") < s.index("section misfit.")
    kept = misfit.script(P, seconds=2, rounds=1, settled=())
    assert "NI_RANDOM" not in kept and kept.count("> /sys/kernel/debug/sched/features") == 2
    for sec in ("misfit.NO_STEAL.r0.0", "misfit.STEAL.r1.1"):
        assert f"section {sec}\n" in s
    big = P.big_cpus()[::P.threads]
    assert all(f"taskset -c {c} sh -c 'while :; do usleep 300; done' &" in s for c in big)
    assert f"taskset -p {(1 << P.ncpus) - 1:x} $p" in s
    assert s.count("seq 10") == 4
    assert s.count("section misfit.STEAL.r1.cpus\n") == 1
    assert 'echo "hogcpu ${37}"' in s


def test_misfit_totals_count_the_hogs_on_big_cpus():
    snap = (DATA / "schedsnap-2x2x2-before.txt").read_text()
    secs = {f"misfit.{f}.r0.{i}": snap for f in misfit.FEATURES for i in (0, 1)}
    secs["misfit.NO_STEAL.r0.cpus"] = "hogcpu 4\nhogcpu 0\nhogcpu 6\nsh: stray\n"
    secs["misfit.STEAL.r0.cpus"] = "hogcpu 2\nhogcpu 3\n"
    t = misfit.totals(secs, rounds=1, big=(0, 1, 2, 3))
    assert (t["NO_STEAL"]["hog_samples"], t["NO_STEAL"]["hog_on_big"]) == (3, 1)
    assert (t["STEAL"]["hog_samples"], t["STEAL"]["hog_on_big"]) == (2, 2)


def test_misfit_totals_sum_the_llc_newidle_counts():
    before = (DATA / "schedsnap-2x2x2-before.txt").read_text()
    after = (DATA / "schedsnap-2x2x2-after.txt").read_text()
    secs = {f"misfit.{f}.r{r}.{i}": (before if i == 0 else after)
            for f in misfit.FEATURES for r in range(2) for i in (0, 1)}
    t = misfit.totals(secs, rounds=2)
    a, b = schedstat.parse(before), schedstat.parse(after)
    one = (b.lb_by_domain("newidle", "lb_count")["MC"]
           - a.lb_by_domain("newidle", "lb_count")["MC"])
    assert one > 0 and t["STEAL"]["lb_count"] == t["NO_STEAL"]["lb_count"] == 2 * one
    smt = (b.lb_by_domain("newidle", "lb_count")["SMT"]
           - a.lb_by_domain("newidle", "lb_count")["SMT"])
    assert smt > 0 and t["STEAL"]["smt_lb_count"] == 2 * smt
