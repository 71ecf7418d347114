# gpudiag — the two commands of the README:
#   make demo   diagnose the bundled example logs
#   make test   build everything and run the C++ and Python test suites
# Both install what they need (Debian packages, a local virtualenv) and are
# safe to run again.

SHELL := /bin/bash
BUILD ?= build
VENV ?= .venv
PYTHON ?= python3
JOBS ?= $(shell nproc)

DEB_LIBS := libhyperscan-dev libsimdjson-dev libboost-program-options-dev \
            libpcre2-dev libgtest-dev libbenchmark-dev pkg-config \
            zlib1g-dev libzstd-dev libbz2-dev liblzma-dev libxxhash-dev
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
GENERATOR := $(shell command -v ninja >/dev/null 2>&1 && echo "-G Ninja")

.PHONY: demo test deps build python test-cpp test-python bench bench-batch bench-compare eval corpus clean

demo: build
	@$(BUILD)/gpudiag diagnose corpus/examples/*.log

test: build python
	@status=0; \
	echo "== C++ (GoogleTest) =="; $(BUILD)/tests/cpp/gpudiag_tests || status=1; \
	echo; echo "== Python and CLI (pytest) =="; \
	GPUDIAG_CLI=$(CURDIR)/$(BUILD)/gpudiag $(VENV)/bin/python -m pytest -q tests/python || status=1; \
	exit $$status

deps:
	@missing=""; \
	for p in $(DEB_LIBS); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	command -v cmake >/dev/null 2>&1 || missing="$$missing cmake"; \
	command -v g++ >/dev/null 2>&1 || missing="$$missing g++"; \
	$(PYTHON) -c "import venv, ensurepip" >/dev/null 2>&1 || missing="$$missing python3-venv"; \
	if [ -n "$$missing" ]; then \
	  echo "installing Debian packages:$$missing"; \
	  $(SUDO) apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq $$missing >/dev/null; \
	fi

$(BUILD)/CMakeCache.txt: | deps
	cmake -S . -B $(BUILD) $(GENERATOR) -DCMAKE_BUILD_TYPE=Release \
	  -DGPUDIAG_BUILD_TESTS=ON -DGPUDIAG_BUILD_BENCH=ON

build: deps $(BUILD)/CMakeCache.txt
	cmake --build $(BUILD) -j $(JOBS)

# The Python package, built by scikit-build-core into a project-local venv.
$(VENV)/bin/python: | deps
	$(PYTHON) -m venv $(VENV)
	$(VENV)/bin/pip install -q --upgrade pip
	$(VENV)/bin/pip install -q "scikit-build-core>=0.9" "pybind11>=2.11" "pytest>=7" ninja

python: deps $(VENV)/bin/python
	$(VENV)/bin/pip install -q --no-build-isolation ".[test]"

test-cpp: build
	$(BUILD)/tests/cpp/gpudiag_tests

test-python: build python
	GPUDIAG_CLI=$(CURDIR)/$(BUILD)/gpudiag $(VENV)/bin/python -m pytest -q tests/python

# Scores gpudiag and the baselines on the published corpus, then on the project's own.
eval: python
	$(VENV)/bin/python -m gpudiag.eval --out results/gpualert-eval
	$(VENV)/bin/python -m gpudiag.eval corpus --name project --out results/project

# Re-captures the project corpus with real frameworks (PyTorch CPU, torchrun/gloo,
# transformers, Lightning; pinned in corpus/capture/requirements.txt), recomposes
# the GPU and cluster logs and rewrites corpus/labels.jsonl. Needs root (some
# scenarios run as 'nobody') and about 30 minutes; not part of `make test`.
CAPTURE_VENV := corpus/.venv-capture
$(CAPTURE_VENV)/bin/python:
	$(PYTHON) -m venv $(CAPTURE_VENV)
	$(CAPTURE_VENV)/bin/pip install -q -r corpus/capture/requirements.txt

corpus: python $(CAPTURE_VENV)/bin/python
	$(CAPTURE_VENV)/bin/python corpus/capture/capture.py
	$(VENV)/bin/python corpus/compose/compose.py
	$(VENV)/bin/python corpus/build_manifest.py

bench: build
	cd $(BUILD) && ./gpudiag_bench

bench-compare: build python
	@command -v rg >/dev/null 2>&1 || DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq ripgrep >/dev/null
	GPUDIAG_CLI=$(CURDIR)/$(BUILD)/gpudiag $(VENV)/bin/python bench/compare.py

bench-batch: build python
	GPUDIAG_CLI=$(CURDIR)/$(BUILD)/gpudiag $(VENV)/bin/python bench/batch_bench.py

clean:
	rm -rf $(BUILD) $(VENV)
