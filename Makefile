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

.PHONY: demo test deps build python test-cpp test-python test-sanitize fuzz bench bench-batch bench-compare bench-run bench-startup eval corpus clean snapshot

demo: build python
	@$(BUILD)/gpudiag diagnose corpus/examples/*.log
	@echo; echo "== the same from Python ($(VENV)/bin/python) =="
	@$(VENV)/bin/python -c 'import gpudiag; print(repr(gpudiag.diagnose("corpus/examples/cuda_oom_trainer.log")))'

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

# Records the JSON of every diagnosis of the published and the project corpus
# (a SHA-256 per log, tests/snapshots/) after a change meant to alter some;
# test_snapshot.py fails on any other difference.
snapshot: build
	GPUDIAG_CLI=$(CURDIR)/$(BUILD)/gpudiag $(PYTHON) tests/python/snapshot.py --update

# The library, the command and the GoogleTest suite built with AddressSanitizer
# and UndefinedBehaviorSanitizer (GCC); runs the suite, the command over every
# corpus log, gpudiag run and watch (test_run.py), and each fuzz target over its
# seeds and past crashes.
SAN_BUILD := build-sanitize
SAN_FLAGS := -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer
SAN_ENV := ASAN_OPTIONS=exitcode=86:detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1:exitcode=86
SAN_LOGS = $(shell find corpus/logs corpus/examples ../shared/corpora -name '*.log' -type f 2>/dev/null)
test-sanitize: deps python
	cmake -S . -B $(SAN_BUILD) $(GENERATOR) -DCMAKE_BUILD_TYPE=RelWithDebInfo \
	  -DCMAKE_CXX_FLAGS="$(SAN_FLAGS)" -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=address,undefined" \
	  -DGPUDIAG_BUILD_TESTS=ON -DGPUDIAG_BUILD_BENCH=OFF -DGPUDIAG_BUILD_FUZZ=ON >/dev/null
	cmake --build $(SAN_BUILD) -j $(JOBS)
	@echo "== GoogleTest under ASan and UBSan =="
	$(SAN_ENV) $(SAN_BUILD)/tests/cpp/gpudiag_tests --gtest_brief=1
	@echo "== the command over $(words $(SAN_LOGS)) corpus logs =="
	@$(SAN_ENV) $(SAN_BUILD)/gpudiag diagnose -f jsonl $(SAN_LOGS) >/dev/null 2>$(SAN_BUILD)/cli-stderr.txt; \
	  rc=$$?; if [ $$rc -ne 0 ] && [ $$rc -ne 1 ]; then cat $(SAN_BUILD)/cli-stderr.txt; echo "exit $$rc"; exit 1; fi; \
	  echo "no sanitizer report (exit $$rc)"
	@echo "== gpudiag run and watch (tests/python/test_run.py) =="
	$(SAN_ENV) GPUDIAG_CLI=$(CURDIR)/$(SAN_BUILD)/gpudiag $(VENV)/bin/python -m pytest -q -p no:cacheprovider tests/python/test_run.py
	@echo "== fuzz targets over their seeds and past crashes =="
	$(SAN_ENV) $(PYTHON) fuzz/run.py replay --build $(SAN_BUILD)

# libFuzzer (clang from Debian) on each fuzz target for FUZZ_SECONDS (or
# FUZZ_RUNS executions, when given), with ASan and UBSan; FUZZ_JOBS processes
# each. The table at the end is the README's. Crashes go to fuzz/crashes/.
# FUZZ_SANITIZE=undefined builds without ASan (in build-fuzz-undefined), for a
# target whose inputs spend their time in ASan's allocator (fuzz_rules: 10x);
# replay its corpus under ASan afterwards (see the README).
FUZZ_SECONDS ?= 60
FUZZ_JOBS ?= 1
FUZZ_RUNS ?= 0
FUZZ_TARGETS ?= diagnose rules container scheduler diagnosis_json
FUZZ_SANITIZE ?= address,undefined
comma := ,
FUZZ_BUILD ?= build-fuzz$(if $(findstring address,$(FUZZ_SANITIZE)),,-$(subst $(comma),-,$(FUZZ_SANITIZE)))
FUZZ_DEBS := clang-14 libclang-rt-14-dev
fuzz: deps
	@missing=""; for p in $(FUZZ_DEBS); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then echo "installing Debian packages:$$missing"; \
	  $(SUDO) apt-get update -qq && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq $$missing >/dev/null; fi
	cmake -S . -B $(FUZZ_BUILD) $(GENERATOR) -DCMAKE_BUILD_TYPE=RelWithDebInfo \
	  -DCMAKE_C_COMPILER=clang-14 -DCMAKE_CXX_COMPILER=clang++-14 \
	  -DCMAKE_CXX_FLAGS="-fsanitize=fuzzer-no-link,$(FUZZ_SANITIZE) -fno-sanitize-recover=undefined" \
	  -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=$(FUZZ_SANITIZE)" -DGPUDIAG_BUILD_CLI=OFF \
	  -DGPUDIAG_BUILD_TESTS=OFF -DGPUDIAG_BUILD_BENCH=OFF -DGPUDIAG_BUILD_FUZZ=ON \
	  -DGPUDIAG_FUZZ_ENGINE=libfuzzer >/dev/null
	cmake --build $(FUZZ_BUILD) -j $(JOBS)
	$(PYTHON) fuzz/run.py fuzz --build $(FUZZ_BUILD) --seconds $(FUZZ_SECONDS) --jobs $(FUZZ_JOBS) \
	  --runs $(FUZZ_RUNS) --targets $(FUZZ_TARGETS)

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

bench-run: build
	GPUDIAG_CLI=$(CURDIR)/$(BUILD)/gpudiag $(VENV)/bin/python bench/run_overhead.py

bench-batch: build python
	GPUDIAG_CLI=$(CURDIR)/$(BUILD)/gpudiag $(VENV)/bin/python bench/batch_bench.py

bench-startup: build
	GPUDIAG_CLI=$(CURDIR)/$(BUILD)/gpudiag $(PYTHON) bench/startup.py

clean:
	rm -rf $(BUILD) $(VENV) $(SAN_BUILD) build-fuzz build-fuzz-*
