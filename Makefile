# linerate — set-up, demo and tests. Needs Debian/Ubuntu and root for the lab (namespaces, nftables).
SHELL := /bin/bash
VENV := .venv
PY := $(VENV)/bin/python
APT_PACKAGES := iperf3 nftables ethtool iproute2 netsniff-ng openssh-server procps util-linux netbase qemu-system-x86 qemu-utils dash chromium fping iputils-ping gcc libc6-dev nghttp2-client nginx-light conntrack tcpdump mmdebstrap extlinux syslinux-common fdisk e2fsprogs
PYTHON ?= python3

.PHONY: install system-deps guest reference-image demo test test-unit test-privileged bench clean
IMAGE := /var/cache/linerate/images/debian-router.qcow2

install: system-deps $(VENV)/.installed guest

# The VM DUT's built-in guest (Debian cloud kernel + busybox initramfs), rebuilt when an input changes.
guest: $(VENV)/.installed
	$(VENV)/bin/linerate lab guest

# The own-image tests' DUT: a Debian 12 router image from Debian packages (mmdebstrap, ~40 s), rebuilt
# only when an input changes (its manifest's digest).
reference-image: $(VENV)/.installed
	install -d -m 0755 $(dir $(IMAGE))
	$(VENV)/bin/linerate image build debian --output $(IMAGE)

# apt only for what is missing, so a prepared machine costs nothing. policy-rc.d (exit 101) keeps the
# packages' services (nginx-light's nginx on :80) from starting: linerate starts its own nginx per test.
system-deps:
	@missing=""; \
	for p in $(APT_PACKAGES); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	$(PYTHON) -c 'import venv, ensurepip' 2>/dev/null || missing="$$missing python3-venv"; \
	if [ -n "$$missing" ]; then \
	  echo "installing system packages:$$missing"; \
	  if [ ! -e /usr/sbin/policy-rc.d ]; then \
	    trap 'rm -f /usr/sbin/policy-rc.d' EXIT INT TERM; \
	    printf '#!/bin/sh\nexit 101\n' > /usr/sbin/policy-rc.d && chmod +x /usr/sbin/policy-rc.d; fi; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $$missing; \
	fi

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(VENV)/bin/pip install -q --upgrade pip
	@# the distribution was called `linerate` before it became linerate-lab: one editable install, not two
	$(VENV)/bin/pip uninstall -q -y linerate 2>/dev/null || true
	$(VENV)/bin/pip install -q -e '.[lab,test]'
	touch $@

demo: install
	$(VENV)/bin/linerate demo

# The unit and CLI tests touch no lab and time nothing: two workers (pytest-xdist). The privileged tests build
# labs and measure on this machine's CPUs: one at a time. Both parts always run; either failing fails the target.
# Bytecode compiled once up front: the privileged tests start linerate ~250 times, and where
# PYTHONDONTWRITEBYTECODE is set (it is on this machine) each start compiles every module again (~0.1 s).
test: install reference-image
	$(PY) -m compileall -q src tests >/dev/null
	status=0; \
	$(PY) -m pytest tests/unit tests/cli -q -p no:cacheprovider -n 2 --durations=15 || status=1; \
	$(PY) -m pytest tests/privileged -q -p no:cacheprovider --durations=60 || status=1; \
	exit $$status

test-unit: install
	$(PY) -m pytest tests/unit tests/cli -q -n 2

test-privileged: install reference-image
	$(PY) -m pytest tests/privileged -q

bench: install
	$(PY) bench/lab_setup.py

clean:
	rm -rf $(VENV) build src/*.egg-info
