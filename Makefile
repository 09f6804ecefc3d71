# Two set-up commands for a fresh machine (see README):
#   make demo   installs the suite and runs the main job on the offline default
#   make test   installs the suite with its test dependencies and runs the tests
# CI (.ci/run) runs `make lint` (ruff, configured in pyproject.toml) and then `make test`.
PYTHON ?= python3
PIP ?= $(PYTHON) -m pip

.PHONY: install install-test demo lint test

install:
	$(PIP) install -q -e .

install-test:
	$(PIP) install -q -e '.[test]'

demo: install
	bench run --profile cpu --defense raw,lightsplit-f --cr 8 --attack decoder-ref,unsplit --seeds 0 --jobs 2 --out results/demo

lint: install-test
	$(PYTHON) -m ruff check .

test: install-test
	$(PYTHON) -m pytest tests
