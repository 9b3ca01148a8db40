# idlesteal: see README.md.  `make test` = unit + guest tests, `make bench` = A/B hackbench.
SHELL := /bin/bash
PYTHON ?= python3
IDLESTEAL ?= $(PYTHON) -m idlesteal

# Debian packages the harness needs (checked with dpkg, installed if missing).
DEB_PACKAGES := qemu-system-x86 busybox-static rt-tests flex bison bc libelf-dev \
	libssl-dev cpio ccache sparse dwarves gcc make git xz-utils libc6-dev \
	debian-archive-keyring python3-venv
PIP_PACKAGES := pytest matplotlib
# Debian's own python3 refuses pip installs outside a venv (PEP 668); allow it.
PIP = $(PYTHON) -m pip install -q $$($(PYTHON) -m pip install --help | grep -q -- --break-system-packages && \
	[ -e "$$($(PYTHON) -c 'import sysconfig; print(sysconfig.get_path("stdlib"))')/EXTERNALLY-MANAGED" ] && \
	echo --break-system-packages)

PRESET ?= 2x2x2
GROUPS ?= 1,2,4
LOOPS ?= 500
REPS ?= 3
A ?= NO_NI_RANDOM
B ?= NI_RANDOM
VARIANT ?= base
BENCH_ARGS ?=

.PHONY: deps unit test guest-test kernel prepare image bench export check-series clean-runs

deps:
	@missing=$$(for p in $(DEB_PACKAGES); do \
		dpkg-query -W -f='$${Status}\n' $$p 2>/dev/null | grep -q 'install ok installed' || echo $$p; done); \
	if [ -n "$$missing" ]; then \
		echo "installing Debian packages:" $$missing; \
		SUDO=$$([ "$$(id -u)" = 0 ] || echo sudo); \
		$$SUDO apt-get update -q && \
		DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -q --no-install-recommends $$missing; \
	fi
	@$(PYTHON) -c 'import pytest, matplotlib' 2>/dev/null || $(PIP) $(PIP_PACKAGES)
	@$(PYTHON) -c 'import idlesteal.cli' 2>/dev/null && command -v idlesteal >/dev/null || $(PIP) -e .

unit:
	$(PYTHON) -m pytest -q -m "not guest" tests --ignore=tests/guest

test:
	$(PYTHON) -m pytest -q tests

guest-test:
	$(PYTHON) -m pytest -q tests/guest

prepare:
	$(IDLESTEAL) prepare

kernel:
	$(IDLESTEAL) kernel --variant $(VARIANT)

image:
	$(IDLESTEAL) image

bench:
	$(IDLESTEAL) bench --variant $(VARIANT) --preset $(PRESET) --groups $(GROUPS) \
		--loops $(LOOPS) --reps $(REPS) --a $(A) --b $(B) $(BENCH_ARGS)

export:
	$(IDLESTEAL) export

check-series:
	$(IDLESTEAL) check-series --variant $(VARIANT)

clean-runs:
	rm -rf build/runs
