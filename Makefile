# Every target creates .venv on first use; nothing but Python is needed.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: run test demo bench clean

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

clean:
	rm -rf $(VENV) runs
