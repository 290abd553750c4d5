# One command each for the main job and the tests; the virtual environment is
# created on first use. torch is installed first, pinned by constraints.txt.
PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
CONFIG ?= configs/default.yaml
# `make run` replaces the config's run folder if one exists: the default run is
# seeded and reproducible, so running it twice gives the same run. Set
# RUN_ARGS= (empty) to make `twolink run` refuse to replace an existing run.
RUN_ARGS ?= --overwrite
LINT_DIRS := twolink_gym training tests benchmarks

.PHONY: run test lint bench clean-venv

$(VENV)/.installed: pyproject.toml constraints.txt
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -c constraints.txt torch==2.13.0
	$(PY) -m pip install --quiet -c constraints.txt -e ".[train,dev]"
	touch $@

run: $(VENV)/.installed  ## train and compare on $(CONFIG), replacing its run folder (RUN_ARGS= to keep it)
	$(VENV)/bin/twolink run $(CONFIG) $(RUN_ARGS)

test: $(VENV)/.installed  ## the test suite (a run that collects no test fails)
	$(PY) -m pytest -q -n 2 tests; rc=$$?; \
	if [ $$rc -eq 5 ]; then echo "pytest collected no tests" >&2; exit 1; fi; exit $$rc

lint: $(VENV)/.installed
	$(VENV)/bin/ruff check $(LINT_DIRS) && $(VENV)/bin/ruff format --check $(LINT_DIRS) && $(VENV)/bin/mypy

bench: $(VENV)/.installed
	$(PY) benchmarks/bench_speed.py

clean-venv:
	rm -rf $(VENV)
