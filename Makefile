# storbench entry points.  Each works on a fresh Debian machine as root with only Python 3.11.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
APT_PACKAGES := fio
# Python caches compiled modules, as it does for a user (a sandbox's PYTHONDONTWRITEBYTECODE made
# every pytest process rewrite every test module and every storbench a test starts compile its own)
unexport PYTHONDONTWRITEBYTECODE

.PHONY: install run check test bench soak clean vendor-plotly

install: $(STAMP)

$(STAMP): pyproject.toml tools/fio-engines.sh
	@missing=""; for p in $(APT_PACKAGES); do command -v $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
	  echo "installing with apt-get:$$missing"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing >/dev/null; \
	fi
	@[ -x $(BIN)/python ] || $(PYTHON) -m venv $(VENV)
	@$(BIN)/python -m pip install -q --upgrade pip >/dev/null
	@$(BIN)/python -m pip install -q -e '.[dev]'
	@# fio's own libiscsi, nfs and http engines, for iscsi:// and nfs:// ...?client=fio and s3:// (storbench works without them)
	@bash tools/fio-engines.sh $(VENV)/lib/storbench/fio-engines || echo "note: fio's libiscsi/nfs/http engines were not built; iscsi:// targets use the qemu-nbd bridge, s3:// targets cannot run"
	@touch $(STAMP)

run: install
	@$(BIN)/storbench run

# the fast tier, for everyday work: pure tests and fio on a temporary directory, on every core
# (pytest-xdist; docs/testing.md)
JOBS ?= auto
FAST := not soak and not slow and not backend and not browser and not root
check: install
	@$(BIN)/python -m pytest -q -n $(JOBS) -m "$(FAST) and not serial"
	@$(BIN)/python -m pytest -q -m "$(FAST) and serial"

# everything, as CI runs it: the tests that need no server, device or browser on every core; then
# the real servers, loop devices and Chromium on three workers (most of their time is waiting), each test grouped with whatever it
# shares (a machine-wide daemon, a module's server: tests/conftest.py), so that every server starts
# once (a short --basetemp: a worker's directory adds popen-gwN/ to paths that hold unix sockets,
# 107 bytes at most); then, one at a time, the rate-capped runs and seed 002's guest dbench on
# zfs-fuse, which need the machine to themselves (docs/testing.md)
# (every session runs even when one before it failed, so that one red test does not hide the rest;
# make still fails with the first failing session's status); data every session reads the same
# (serve's store of real runs) is made once for all of them in STORBENCH_TEST_SHARED
SERVER_JOBS ?= 3
test: install
	@bash tests/setup-system.sh
	@first=0; second=0; third=0; base=$$(mktemp -d /tmp/sbt-XXXXXX); shared=$$(mktemp -d /tmp/sbs-XXXXXX); \
	export STORBENCH_TEST_SHARED=$$shared; \
	$(BIN)/python -m pytest -q -n $(JOBS) -m "not soak and not backend and not browser and not root and not serial" || first=$$?; \
	$(BIN)/python -m pytest -q -n $(SERVER_JOBS) --dist loadgroup --basetemp $$base -m "not soak and (backend or browser or root) and not serial and not daemons" || second=$$?; \
	rm -rf --one-file-system $$base; \
	$(BIN)/python -m pytest -q -m "not soak and (daemons or serial)" || third=$$?; \
	rm -rf --one-file-system $$shared; \
	if [ $$first -ne 0 ] || [ $$second -ne 0 ] || [ $$third -ne 0 ]; then \
	  echo "make test: the parallel session exited $$first, the servers/browser/root session $$second, the one-at-a-time one $$third" >&2; \
	  if [ $$first -ne 0 ]; then exit $$first; elif [ $$second -ne 0 ]; then exit $$second; else exit $$third; fi; \
	fi

soak: install
	@bash tests/setup-system.sh
	@$(BIN)/python -m pytest -q -m soak

bench: install
	@$(BIN)/python benchmarks/run_all.py

clean:
	rm -rf $(VENV) build src/*.egg-info

# the report's plotly.js partial bundle (render/vendor/README.md): the version the plotly package embeds
vendor-plotly: install
	@v=$$($(BIN)/python -c "from plotly.offline import get_plotlyjs_version as v; print(v())"); d=$$(mktemp -d); \
	(cd $$d && npm pack -q plotly.js-basic-dist-min@$$v >/dev/null && tar xzf plotly.js-basic-dist-min-$$v.tgz) && \
	cp $$d/package/plotly-basic.min.js src/storbench/render/vendor/ && cp $$d/package/LICENSE src/storbench/render/vendor/plotly-LICENSE.txt && \
	rm -rf $$d && echo "plotly.js-basic-dist-min $$v" && sha256sum src/storbench/render/vendor/plotly-basic.min.js
