# idlesteal: see README.md.  `make test` = unit + guest tests, `make bench` = A/B suite,
# `make stress` = debug kernel (KASAN, lockdep) under hotplug/cpuset/throttling/feature churn.
SHELL := /bin/bash
# Debian's python3: its packages (python3-pytest, python3-matplotlib,
# python3-scipy, python3-mypy) come from apt like everything else the harness needs.  The
# harness runs from the checkout as `python3 -m idlesteal` (no install).
PYTHON ?= /usr/bin/python3
# The kernel base (idlesteal/bases.py): 7.2 (Debian sid, the series' base;
# build/), 6.12 (trixie) or 7.3 (trixie-backports), each in build/ports/BASE/.
# Checked by the harness: an unknown one is an error that lists the known ones.
DEFAULT_BASE := 7.2
BASE ?= $(or $(IDLESTEAL_BASE),$(DEFAULT_BASE))
IDLESTEAL ?= $(PYTHON) -m idlesteal --base $(BASE)

# Debian packages the harness needs (checked with dpkg-query before every
# command that needs them: installed as root, else the apt-get line is printed).
# cmake, libdw-dev, libbpf-dev, zlib1g-dev: pahole 1.30 from vendor/ (kernel
# BTF for sched_ext); clang-19: the BPF side of the sched_ext schedulers;
# dpkg-dev, fakeroot, debhelper, kmod, rsync: bindeb-pkg's build dependencies
# (the server package, docs/server.md).
DEB_PACKAGES := qemu-system-x86 busybox-static rt-tests linux-perf sysbench flex bison bc libelf-dev \
	libssl-dev cpio ccache sparse dwarves gcc make git xz-utils libc6-dev \
	debian-archive-keyring python3 python3-pytest python3-matplotlib python3-scipy python3-mypy \
	qemu-system-arm gcc-aarch64-linux-gnu libc6-dev-arm64-cross device-tree-compiler \
	cmake libdw-dev libbpf-dev zlib1g-dev clang-19 dpkg-dev fakeroot debhelper kmod rsync

PRESET ?= 2x2x2
WORKLOAD ?= hackbench
GROUPS ?= 1,2,4
LOOPS ?= 500
REPS ?= 3
A ?= NO_STEAL
B ?= STEAL
VARIANT ?= steal
BENCH_ARGS ?=
# Stress (idlesteal/runs/stress/): seconds of load per preset; `make stress`
# runs both presets (default 2 x 600 s = 20 min of load, plus boots).
STRESS_PRESETS ?= 2x2x2,2node
STRESS_SECONDS ?= 600
STRESS_SHORT_SECONDS ?= 60
STRESS_ARGS ?=

# Asymmetric-capacity arm64 guest (idlesteal/runs/asym.py): placement with and
# without the stable idle-core patch, results in results/asym/.
ASYM_PRESET ?= asym2b2l
ASYM_ROUNDS ?= 200
ASYM_RUNS ?= 3
ASYM_BOOTS ?= 6
ASYM_ARGS ?=

.PHONY: deps unit test guest-test kernel prepare image bench bench-suite compare bench-dd bench-one reference offcost stress bench-scale \
	stress-short kcsan export check-series clean-runs kernel-arm64 bench-asym sparsemask-bench scx \
	bench-scx bench-ports test-ports test-full test-package-distro install-scx tables scx-upstream bench-latency \
	package

deps:
	@missing=$$(for p in $(DEB_PACKAGES); do \
		dpkg-query -W -f='$${Status}\n' $$p 2>/dev/null | grep -q 'install ok installed' || echo $$p; done); \
	if [ -n "$$missing" ]; then \
		if [ "$$(id -u)" != 0 ]; then \
			echo "idlesteal needs these Debian packages; install them with:" >&2; \
			echo "  sudo apt-get install -y --no-install-recommends" $$missing >&2; \
			exit 1; \
		fi; \
		echo "installing Debian packages:" $$missing; \
		apt-get update -q && \
		DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends $$missing; \
	fi

# Fast checks: mypy over the package (mypy.ini), then the unit tests.
unit: deps
	$(PYTHON) -m mypy idlesteal
	env -u IDLESTEAL_BASE $(PYTHON) -m pytest -q -m "not guest" tests --ignore=tests/guest

# Everything: mypy, unit tests and the guest tests (builds the kernels),
# and the proof of the series on each base of PROOF_BASES (marker `proof`:
# its steal kernel built, tests/guest/test_steal_ports.py; the other
# ports' proof and every port's scx tests are make test-ports').  With
# BASE= another base: mypy, the unit tests and that base's own guest
# tests (marker `ports`: tests/guest/test_scx_ports.py, and where the base
# has a series of its own, tests/guest/test_steal_ports.py), which the
# default `make test` leaves out.
# The default base's tests and the proofs of PROOF_BASES (test, guest-test).
# `make test` is what CI runs and what must fit its budget (docs/timings.md:
# 60 min cold, 30 warm, on the 2-core host): every x86 guest test boots one
# kernel, TEST_VARIANT scx (the series, its KUnit suites, sched_ext, 9p), so
# it builds two kernels (scx, arm64) and one peer (TEST_PEERS).
# `make test-full` is the rest on top: the x86 guest tests on the lean
# benchmark kernel (steal), every peer, the series' proof on 6.12, and the
# tests marked `full` (60 s of stress on the debug kernel, the host-mode
# guest); docs/timings.md says when to run it.
TEST_VARIANT ?= scx
TEST_PEERS ?= scx_p2dq
PROOF_BASES ?=
# The proof's tests are selected only when PROOF_BASES names a base (none
# would run: 17 skips).
TEST_MARKS ?= $(if $(strip $(PROOF_BASES)),(not ports or proof),not ports) and not full \
	and not distro
GUEST_TESTS = IDLESTEAL_STRESS_SECONDS=$(STRESS_SHORT_SECONDS) IDLESTEAL_PROOF_BASES="$(PROOF_BASES)" \
	IDLESTEAL_TEST_VARIANT=$(TEST_VARIANT) IDLESTEAL_TEST_PEERS="$(TEST_PEERS)" \
	$(PYTHON) -m pytest -q -m "$(TEST_MARKS)"
test: deps
	$(PYTHON) -m mypy idlesteal
ifeq ($(BASE),$(DEFAULT_BASE))
	$(GUEST_TESTS) tests
else
	$(IDLESTEAL) presets >/dev/null
	env -u IDLESTEAL_BASE $(PYTHON) -m pytest -q -m "not guest" tests --ignore=tests/guest
	IDLESTEAL_BASE=$(BASE) $(PYTHON) -m pytest -q -m ports tests/guest
endif

# The ports' guest tests, base by base (scx_idlesteal on 6.12 and 7.3: docs/ports.md).
PORT_BASES ?= 6.12 7.3
# PROOF_BASES (above): the ports whose series `make test` proves too; none
# by default (CI's budget), 6.12 in `make test-full` (docs/ports.md, "In CI").
test-full: deps
	$(MAKE) --no-print-directory test TEST_VARIANT=steal TEST_PEERS=all PROOF_BASES=6.12 \
		TEST_MARKS="(not ports or proof) and not distro"

# The package from Debian's own configuration of BASE (reduced to the 9p
# modules the guest mounts this machine's userland with: configs/hostroot.lsmod),
# built, unpacked and booted, suite --host inside (docs/server.md; tens of
# minutes: docs/timings.md).
test-package-distro: deps
	IDLESTEAL_BASE=$(BASE) $(PYTHON) -m pytest -q -m distro tests/guest/test_package_distro.py

test-ports: deps
	$(foreach b,$(PORT_BASES),$(MAKE) --no-print-directory test BASE=$(b) &&) true

guest-test: deps
	$(GUEST_TESTS) tests/guest

prepare: deps
	$(IDLESTEAL) prepare

kernel: deps
	$(IDLESTEAL) kernel --variant $(VARIANT)

image: deps
	$(IDLESTEAL) image

# `make bench`: the A/B suite of configs/bench.suite (STEAL vs NO_STEAL in the
# same boot, interleaved, BENCH_REPS repetitions; hackbench process/thread x
# socket/pipe, perf bench sched messaging, sysbench threads/mutex, wakelat on
# 1x1x2, 2x2x2, 2x4x2), then the STEAL x DELAY_DEQUEUE matrix at heavy
# overload (tasks >> CPUs), the arm64 placement comparison with and without
# the stable idle-core patch, sparsemask against a dense bitmap natively,
# stealing at size, and the schedulers side by side (bench-scx).
# Results: results/<preset>-<workload>.{txt,json,png}, results/summary.txt,
# results/dd-*.{txt,json,png}, results/asym/, results/sparsemask/,
# results/scale/, results/scx/.
# Subsets: make bench SUITE_PRESETS=2x2x2 SUITE_WORKLOADS=hackbench,wakelat
# (or one of the steps: bench-suite, bench-dd, bench-asym, sparsemask-bench)
BENCH_VARIANT ?= steal
BENCH_REPS ?= 5
SUITE_PRESETS ?=
SUITE_WORKLOADS ?=
SUITE_FILE ?=
DD_PRESET ?= 2x2x2
DD_GROUPS ?= 16
DD_LOOPS ?= 100
DD_SCHBENCH_LEVELS ?= 2
DD_SCHBENCH_SECONDS ?= 3
DD_REPS ?= 5

bench: deps
	$(MAKE) --no-print-directory bench-suite
	$(MAKE) --no-print-directory bench-dd
	$(MAKE) --no-print-directory bench-latency
	$(MAKE) --no-print-directory bench-asym
	$(MAKE) --no-print-directory sparsemask-bench
	$(MAKE) --no-print-directory bench-scale
	$(MAKE) --no-print-directory bench-scx
	$(MAKE) --no-print-directory bench-ports

# The cover letter's latency table: schbench (the p99 wakeup latency of a
# request sized for TCG, and the newidle storm) and wakelat on 2x2x2,
# NO_STEAL against STEAL interleaved, LAT_REPS repetitions a side, in one
# boot per line with DELAY_DEQUEUE on (results/latency/) and off
# (results/latency-nodd/, schbench's two lines).  16 + 10 min under TCG on
# a quiet 2-core host (docs/timings.md).
LAT_REPS ?= 8
bench-latency: deps
	$(IDLESTEAL) kernel --variant $(BENCH_VARIANT)
	$(IDLESTEAL) suite --variant $(BENCH_VARIANT) --no-build --reps $(LAT_REPS) --presets 2x2x2 \
		--workloads schbench,schbench-storm,wakelat --outdir results/latency $(BENCH_ARGS)
	$(IDLESTEAL) suite --variant $(BENCH_VARIANT) --no-build --reps $(LAT_REPS) --presets 2x2x2 \
		--workloads schbench,schbench-storm --a "NO_STEAL NO_DELAY_DEQUEUE" \
		--b "STEAL NO_DELAY_DEQUEUE" --outdir results/latency-nodd $(BENCH_ARGS)

# One A/B line per port base, for a distro engineer on the kernel
# they carry: hackbench NO_STEAL against STEAL on 2x2x2, interleaved in one
# boot of each base's steal kernel.  Results: results/ports/<base>/hackbench.*.
PORTS_BENCH_REPS ?= 5
PORTS_BENCH_LEVELS ?= 1,4
bench-ports: deps
	@set -e; for b in $(PORT_BASES); do \
		$(PYTHON) -m idlesteal --base $$b kernel --variant steal; \
		$(PYTHON) -m idlesteal --base $$b bench --variant steal --no-build --preset 2x2x2 \
			--levels $(PORTS_BENCH_LEVELS) --reps $(PORTS_BENCH_REPS) \
			--name hackbench --outdir results/ports/$$b $(BENCH_ARGS); \
	done

# Stealing at size (outside CI: a 160-vCPU guest): a small hackbench with
# NO_STEAL and STEAL interleaved in one boot of each preset; steals, cost per
# attempt, overload masks empty afterwards, schedstat consistent (bench
# checks both).  Results: results/scale/scale-<preset>.{txt,json,png}.
SCALE_PRESETS ?= 2x2x2 8llc seed160
SCALE_LEVELS ?= 1,2
SCALE_LOOPS ?= 20
SCALE_REPS ?= 3
bench-scale: deps
	$(IDLESTEAL) kernel --variant $(BENCH_VARIANT)
	@set -e; for p in $(SCALE_PRESETS); do \
		$(IDLESTEAL) bench --variant $(BENCH_VARIANT) --no-build --preset $$p \
			--levels $(SCALE_LEVELS) --size $(SCALE_LOOPS) --reps $(SCALE_REPS) \
			--name scale-$$p --outdir results/scale $(BENCH_ARGS); \
	done

# After a `make bench`: its suite figures against the committed ones it
# overwrote (or any other summary.json / REV:path).
COMPARE_OLD ?= HEAD:results/summary.json
compare:
	$(IDLESTEAL) compare $(COMPARE_OLD) results/summary.json --old-name committed --new-name this-run

# The tables of results/README.md and patches/cover-letter.txt, from the
# committed JSONs (after a run that rewrote them; `make unit` checks them).
tables:
	$(IDLESTEAL) tables

bench-suite: deps
	$(IDLESTEAL) kernel --variant $(BENCH_VARIANT)
	$(IDLESTEAL) suite --variant $(BENCH_VARIANT) --no-build --reps $(BENCH_REPS) \
		$(if $(SUITE_PRESETS),--presets $(SUITE_PRESETS)) \
		$(if $(SUITE_WORKLOADS),--workloads $(SUITE_WORKLOADS)) \
		$(if $(SUITE_FILE),--suite-file $(SUITE_FILE)) $(BENCH_ARGS)

bench-dd: deps
	@set -e; for dd in DELAY_DEQUEUE NO_DELAY_DEQUEUE; do \
		$(IDLESTEAL) bench --variant $(BENCH_VARIANT) --no-build --preset $(DD_PRESET) \
			--levels $(DD_GROUPS) --size $(DD_LOOPS) --reps $(DD_REPS) \
			--a "NO_STEAL $$dd" --b "STEAL $$dd" --name dd-$$dd $(BENCH_ARGS); \
		$(IDLESTEAL) bench --variant $(BENCH_VARIANT) --no-build --preset $(DD_PRESET) \
			--workload schbench-storm --levels $(DD_SCHBENCH_LEVELS) \
			--size $(DD_SCHBENCH_SECONDS) --reps $(DD_REPS) \
			--a "NO_STEAL $$dd" --b "STEAL $$dd" --name dd-schbench-storm-$$dd $(BENCH_ARGS); \
	done

# The guest config against a distro-like one (defconfig + kvm_guest.config),
# same source, same preset, one boot per sample: results/kernels-*.txt.
reference: deps
	$(IDLESTEAL) kernels --variants steal,reference --preset 2x2x2 --workload hackbench \
		--level 1 --size 2000 --boots 3

# What the series costs with STEAL off: the base kernel (`mainline`: the
# base tag) against the posted series alone (`posted`: no patches/separate/),
# same config, one boot per sample, alternating: perf bench sched pipe (the
# wakeup/sleep path) and messaging.  results/offcost-*.txt, results/README.md.
OFFCOST_BOOTS ?= 10
offcost: deps
	$(IDLESTEAL) kernels --variants mainline,posted --preset 2x2x2 --workload perf-pipe \
		--level 1 --size 20000 --boots $(OFFCOST_BOOTS) --runs 5 --name offcost-pipe
	$(IDLESTEAL) kernels --variants mainline,posted --no-build --preset 2x2x2 \
		--workload perf-messaging --level 4 --size 30 --boots $(OFFCOST_BOOTS) --runs 5 \
		--name offcost-messaging

# One A/B sweep with your own settings.  Your own program instead of a
# built-in workload: COMMAND (a template with {level} and {size}), METRIC (a
# regular expression, first group = the number), HIGHER_BETTER=1 if more is
# better, UNIT, WORKLOAD (its name), FILES (host files/dirs for the image,
# HOST[:GUEST], space-separated).  README: "Your own benchmark".
COMMAND ?=
METRIC ?=
UNIT ?=
HIGHER_BETTER ?=
FILES ?=
bench-one: deps
	$(IDLESTEAL) bench --variant $(VARIANT) --preset $(PRESET) \
		--levels $(GROUPS) --size $(LOOPS) --reps $(REPS) --a "$(A)" --b "$(B)" \
		$(if $(COMMAND),--workload $(if $(filter command line,$(origin WORKLOAD)),$(WORKLOAD),custom) \
			--command '$(COMMAND)' --metric '$(METRIC)' $(if $(UNIT),--unit '$(UNIT)') \
			$(if $(HIGHER_BETTER),--higher-better),--workload $(WORKLOAD)) \
		$(foreach f,$(FILES),--file $(f)) $(BENCH_ARGS)

# sparsemask vs dense bitmap, natively (tools/sparsemask-bench): one setter +
# the scanner (2 threads: fits a 2-core host), then 2 setters + the scanner.
SPARSE_SECONDS ?= 1
SPARSE_REPS ?= 10
sparsemask-bench: deps
	$(IDLESTEAL) prepare
	$(MAKE) --no-print-directory -C tools/sparsemask-bench
	@mkdir -p results/sparsemask
	@set -e; for s in 1 2; do \
		out=results/sparsemask/s$$s.txt; \
		{ echo "# $$(date -u +%FT%TZ) host $$(nproc) cores, $$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)"; \
		  echo "# tools/sparsemask-bench/sparsemask-bench -s $$s -d $(SPARSE_SECONDS) -r $(SPARSE_REPS), header $$(sha256sum build/linux/kernel/sched/sparsemask.h | cut -c1-16)"; \
		  tools/sparsemask-bench/sparsemask-bench -s $$s -d $(SPARSE_SECONDS) -r $(SPARSE_REPS); } | tee $$out; \
	done

# sched_ext: the scx kernel (series + BTF + SCHED_CLASS_EXT), the
# schedulers built from source (scx_simple, scx_idlesteal) and the published
# peers from crates.io (scx_p2dq, scx_bpfland, scx_cosmos, scx_beerland,
# scx_lavd): docs/scx.md.
scx: deps
	$(IDLESTEAL) scx

# scx_idlesteal as a system service (docs/scx.md, "As a service"): the
# loader `make scx` built into $(DESTDIR)$(PREFIX)/bin, its systemd unit into
# $(DESTDIR)$(PREFIX)/lib/systemd/system, its options into
# $(DESTDIR)/etc/default/scx_idlesteal (an existing one is kept).  Runs no
# systemctl: that is for the machine it is installed on.
PREFIX ?= /usr
DESTDIR ?=
SCX_IDLESTEAL_BIN ?= build/scx-scx/build/bin/scx_idlesteal
SCX_PACKAGING := tools/scx_idlesteal/packaging
install-scx:
	@case '$(PREFIX)$(DESTDIR)' in *[!A-Za-z0-9/._+-]*) echo "install-scx: PREFIX/DESTDIR may hold only letters, digits and / . _ + -" >&2; exit 2;; esac
	@case '$(PREFIX)' in /*) ;; *) echo "install-scx: PREFIX '$(PREFIX)' is not an absolute path" >&2; exit 2;; esac
	@case '$(DESTDIR)' in ''|/*) ;; *) echo "install-scx: DESTDIR '$(DESTDIR)' is not an absolute path" >&2; exit 2;; esac
	@test -x '$(SCX_IDLESTEAL_BIN)' || { echo "install-scx: no loader at $(SCX_IDLESTEAL_BIN): build it with 'make scx' (or set SCX_IDLESTEAL_BIN)" >&2; exit 1; }
	install -D -m 755 '$(SCX_IDLESTEAL_BIN)' '$(DESTDIR)$(PREFIX)/bin/scx_idlesteal'
	install -d '$(DESTDIR)$(PREFIX)/lib/systemd/system'
	sed 's|@BINDIR@|$(PREFIX)/bin|g' $(SCX_PACKAGING)/scx_idlesteal.service.in > '$(DESTDIR)$(PREFIX)/lib/systemd/system/scx_idlesteal.service'
	chmod 644 '$(DESTDIR)$(PREFIX)/lib/systemd/system/scx_idlesteal.service'
	@if [ -e '$(DESTDIR)/etc/default/scx_idlesteal' ]; then \
		echo "install-scx: kept $(DESTDIR)/etc/default/scx_idlesteal"; \
	else \
		install -D -m 644 $(SCX_PACKAGING)/scx_idlesteal.default '$(DESTDIR)/etc/default/scx_idlesteal'; \
	fi
	@echo "install-scx: done; on that machine: systemctl daemon-reload && systemctl enable --now scx_idlesteal"

# scx_idlesteal as a patch against a clean clone of sched-ext/scx, committed
# there on the branch scx_idlesteal and written to patches/scx/, then
# rustfmt, clippy -Dwarnings and cargo build --locked in that tree
# (docs/scx-upstream.md).
SCX_TREE ?=
scx-upstream: deps
	@test -n '$(SCX_TREE)' || { echo "scx-upstream: set SCX_TREE to a clean clone of sched-ext/scx" >&2; exit 2; }
	$(IDLESTEAL) scx-upstream --tree '$(SCX_TREE)'

# Side by side on the scx kernel (configs/scx.suite, one boot per preset):
# EEVDF NO_STEAL (the baseline), EEVDF STEAL, scx_idlesteal and the peers,
# switched between repetitions, the order rotated.  Results: results/scx/.
SCX_SCHED ?= eevdf,eevdf+steal,scx_idlesteal,scx_p2dq,scx_bpfland,scx_cosmos,scx_beerland,scx_lavd
SCX_REPS ?= 4
SCX_PRESETS ?=
bench-scx: deps
	$(IDLESTEAL) scx
	$(IDLESTEAL) side-by-side --no-build --sched $(SCX_SCHED) --reps $(SCX_REPS) \
		$(if $(SCX_PRESETS),--presets $(SCX_PRESETS)) $(BENCH_ARGS)

kernel-arm64: deps
	$(IDLESTEAL) kernel --variant arm64

# Concurrent wakers (placement -W): the wakeups race in select_idle_capacity(),
# which is what the stable idle-core patch is about.
ASYM_SPIN ?= 50
ASYM_IDLE ?= 2

bench-asym: deps
	$(IDLESTEAL) asym-bench --preset $(ASYM_PRESET) --rounds $(ASYM_ROUNDS) --runs $(ASYM_RUNS) \
		--boots $(ASYM_BOOTS) --wakers --spin $(ASYM_SPIN) --idle $(ASYM_IDLE) \
		--name $(ASYM_PRESET)-wakers $(ASYM_ARGS)

stress: deps
	$(IDLESTEAL) stress --preset $(STRESS_PRESETS) --seconds $(STRESS_SECONDS) $(STRESS_ARGS)

# KCSAN (configs/kcsan.config, a kernel of its own: KCSAN excludes KASAN): the
# stress suite with data-race detection; a report that touches the series
# fails it, the base kernel's own are listed (idlesteal/measure/kcsan.py).  Not in
# `make test`: the KCSAN kernel's cold build took 6 min here.
KCSAN_SECONDS ?= 300
kcsan: deps
	$(IDLESTEAL) stress --variant kcsan --preset $(STRESS_PRESETS) --seconds $(KCSAN_SECONDS) \
		--outdir results/kcsan $(STRESS_ARGS)

# The short version also runs inside `make test` (tests/guest/test_stress.py).
stress-short: deps
	$(IDLESTEAL) stress --preset $(STRESS_PRESETS) --seconds $(STRESS_SHORT_SECONDS) $(STRESS_ARGS)

# An installable kernel with the series for a server (docs/server.md), from
# SERVER_CONFIG (the server's /boot/config-$(uname -r)) or, when that is
# empty, Debian's configuration of BASE; SERVER_LSMOD (its `lsmod`) keeps
# only those modules; PKG_FORMAT deb or rpm.  Packages in build/packages/.
SERVER_CONFIG ?=
SERVER_LSMOD ?=
PKG_FORMAT ?= deb
package: deps
	$(IDLESTEAL) package $(if $(SERVER_CONFIG),--config $(SERVER_CONFIG)) \
		$(if $(SERVER_LSMOD),--lsmod $(SERVER_LSMOD)) --format $(PKG_FORMAT)

export: deps
	$(IDLESTEAL) export

check-series: deps
	$(IDLESTEAL) check-series --variant base

clean-runs:
	rm -rf build/runs
