# The two set-up commands: `make demo` and `make test` each build .venv from nothing (python3 only).
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
DEMO_STAMP := $(VENV)/.core

.PHONY: demo test lint bench warmup clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	# CPU PyTorch for the rl extra (stable-baselines3, sb3-contrib). The pin takes the machine's
	# local CPU build; unpinned, pip would take the newest build with several GB of CUDA packages.
	$(PY) -m pip install --quiet "torch==2.13.0"
	$(PY) -m pip install --quiet -e ".[all]"
	touch $(STAMP)

# The demo needs the core package only (numpy, numba, gymnasium): no torch, JAX, Ray or OpenSpiel.
$(DEMO_STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e .
	touch $(DEMO_STAMP)

demo: $(DEMO_STAMP)
	$(VENV)/bin/mc-envs solve samegame --position 1 --algo nmcs --level 2 --time 60 --out solution.json
	$(VENV)/bin/mc-envs verify solution.json

test: $(STAMP)
	$(VENV)/bin/ruff check .
	SDL_VIDEODRIVER=dummy SDL_AUDIODRIVER=dummy $(PY) -m pytest -q --durations=20 tests

lint: $(STAMP)
	$(VENV)/bin/ruff check . && $(VENV)/bin/ruff format --check .

bench: $(STAMP)
	$(PY) benchmarks/samegame_bench.py

warmup: $(STAMP)
	$(VENV)/bin/mc-envs warmup

clean:
	rm -rf $(VENV) build *.egg-info
