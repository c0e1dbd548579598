# Quick start: `make demo` runs the main job on the default arm, `make test` runs the tests.
# Both create (or reuse) the virtual environment .venv and install requirements.txt into it.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: demo test venv clean

demo: $(STAMP)
	$(PY) -m robo_dynamics.demo

test: $(STAMP)
	$(PY) -m pytest -q

venv: $(STAMP)

$(STAMP): requirements.txt
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --disable-pip-version-check -r requirements.txt
	touch $(STAMP)

clean:
	rm -rf $(VENV) .pytest_cache
