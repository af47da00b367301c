# The two commands: `make run` serves the whole service locally, `make test` runs every test.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: run test check bench clean

run: $(STAMP)
	$(BIN)/conveyor local

test: $(STAMP)
	$(BIN)/pytest -q -n 2 --dist loadfile

check: test
	$(BIN)/ruff check .
	$(BIN)/mypy

$(STAMP): requirements.txt requirements-dev.txt pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -r requirements.txt -r requirements-dev.txt
	$(BIN)/python -m pip install --quiet --no-deps -e .
	touch $(STAMP)

clean:
	rm -rf $(VENV)
