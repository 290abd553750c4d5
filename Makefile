# One command each for the main job and the tests; the virtual environment is
# created on first use (the package with its train, dev, docs and jax extras). torch is
# installed first, pinned by constraints.txt.
PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
CONFIG ?= configs/default.yaml
# `make run` replaces the config's run folder if one exists: the default run is
# seeded and reproducible, so running it twice gives the same run. Set
# RUN_ARGS= (empty) to make `twolink run` refuse to replace an existing run.
RUN_ARGS ?= --overwrite
LINT_DIRS := twolink_gym training tests benchmarks docs/scripts

.PHONY: run test lint bench docs docs-results chromium clean-venv

$(VENV)/.installed: pyproject.toml constraints.txt
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -c constraints.txt torch==2.13.0
	$(PY) -m pip install --quiet -c constraints.txt -e ".[train,dev,docs,jax]"
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

# The documentation site: the docs extra (pinned in pyproject.toml), a check
# that the generated results pages match docs/results/, a strict build into
# site/, then a check of the built site in headless Chromium (Debian's package).
CHROMIUM ?= /usr/bin/chromium
export NO_MKDOCS_2_WARNING := 1

$(VENV)/.docs-installed: $(VENV)/.installed  # the docs extra comes with the rest
	touch $@

chromium:  ## Debian's chromium for the browser check (installed when run as root)
	@if [ ! -x "$(CHROMIUM)" ]; then \
	  if [ "$$(id -u)" = 0 ]; then \
	    apt-get update && apt-get install -y chromium; \
	  else \
	    echo "make docs needs Chromium at $(CHROMIUM); install it with:" >&2; \
	    echo "    sudo apt-get update && sudo apt-get install -y chromium" >&2; \
	    echo "or pass CHROMIUM=/path/to/chromium" >&2; \
	    exit 1; \
	  fi; \
	fi

docs-results: $(VENV)/.installed  ## rewrite docs/results/*.md from the data in docs/results/
	$(PY) docs/scripts/results_pages.py

docs: $(VENV)/.docs-installed chromium  ## build the documentation site strictly into site/ and check it in Chromium
	$(PY) docs/scripts/results_pages.py --check
	$(VENV)/bin/mkdocs build --strict --clean --quiet
	$(PY) docs/scripts/check_site.py site --chromium $(CHROMIUM)

clean-venv:
	rm -rf $(VENV)
