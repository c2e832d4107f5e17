# The two set-up commands: `make demo` and `make test` each build .venv from nothing (python3 only).
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
DEMO_STAMP := $(VENV)/.core

.PHONY: demo test docs lint bench warmup clean dist smoke smoke-pythons

# The Pythons whose fresh venvs get the built wheel in `make smoke` (found under `pyenv root`, whose
# shims answer only for the global version, or on PATH); .ci/run stops at once if one is missing.
SMOKE_PYTHONS ?= 3.10 3.13
SMOKE := $(PYTHON) tests/smoke/run_smoke.py

# PyTorch's index of CPU builds, and the CPU build taken when that index does not answer.
TORCH_CPU_INDEX ?= https://download.pytorch.org/whl/cpu
TORCH_FALLBACK ?= torch==2.13.0+cpu
NO_CUDA := import importlib.metadata as m; cuda = sorted(d.metadata["Name"] for d in m.distributions() \
	if d.metadata["Name"].lower().startswith(("nvidia", "cuda"))); assert not cuda, f"CUDA packages: {cuda}"

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	# CPU PyTorch for the rl extra (stable-baselines3, sb3-contrib): PyPI's Linux torch brings several
	# GB of CUDA packages. From PyTorch's CPU index when it answers within 10 s (as on a user's
	# machine); otherwise TORCH_FALLBACK, whose +cpu tag matches only a CPU build (this build
	# machine reaches no such index, and its local wheel folder holds that build). Then no CUDA
	# package may be installed.
	if $(PY) -c "import urllib.request as u; u.urlopen('$(TORCH_CPU_INDEX)/torch/', timeout=10)" 2>/dev/null; \
	then $(PY) -m pip install --quiet --index-url $(TORCH_CPU_INDEX) torch; \
	else $(PY) -m pip install --quiet "$(TORCH_FALLBACK)"; fi
	$(PY) -m pip install --quiet -e ".[all]"
	$(PY) -c '$(NO_CUDA)'
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

# The documentation site (docs/, Sphinx): every page written again (-E), any warning an error.
SPHINX := $(PY) -m sphinx -b html -E -q -W --keep-going docs docs/_build/html

docs: $(STAMP)
	$(SPHINX)
	@echo "docs/_build/html/index.html"

# The docs build first (a broken page fails here); tests/test_docs.py then checks that build. The
# suite runs on TEST_WORKERS pytest-xdist workers, each test file on one, then the tests marked
# serial alone (tests/conftest.py).
TEST_WORKERS ?= 2
PYTEST := MC_ENVS_DOCS_HTML=docs/_build/html SDL_VIDEODRIVER=dummy SDL_AUDIODRIVER=dummy $(PY) -m pytest -q
# The files that mark tests serial: the serial phase collects only these (all 75: 10 to 35 s).
SERIAL_FILES = $(shell grep -l "mark\.serial" tests/test_*.py)
# mc_envs's bytecode, compiled before pytest as pip does for an installed copy: the editable install
# has none, and where PYTHONDONTWRITEBYTECODE is set (these build VMs) each of the 200-odd Python
# processes the suite starts would compile the package's sources again (0.15 to 0.2 s each).
BYTECODE := $(PY) -m compileall -q mc_envs

test: $(STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/mypy
	$(SPHINX)
	$(MAKE) --no-print-directory smoke
	$(BYTECODE)
	$(PYTEST) -n $(TEST_WORKERS) --dist loadfile -m "not serial" --durations=20 tests
	$(PYTEST) -m serial --durations=5 $(SERIAL_FILES)

# The release files: sdist and wheel in dist/ (python -m build), checked by twine.
dist: $(STAMP)
	rm -rf dist
	$(PY) -m build --outdir dist .
	$(PY) -m twine check --strict dist/*

# The built wheel with its render extra from PyPI, in a fresh venv of each of SMOKE_PYTHONS (made
# and removed in a temporary directory, numba compiling cold), run from a folder holding a user's
# own agents.py and render/: tests/smoke/smoke_wheel.py.
smoke: smoke-pythons dist
	$(SMOKE) --wheel dist/mc_envs-*-py3-none-any.whl $(addprefix --python ,$(SMOKE_PYTHONS))

smoke-pythons:
	$(SMOKE) --check-pythons $(SMOKE_PYTHONS)

lint: $(STAMP)
	$(VENV)/bin/ruff check . && $(VENV)/bin/ruff format --check . && $(VENV)/bin/mypy

bench: $(STAMP)
	$(PY) benchmarks/samegame_bench.py

warmup: $(STAMP)
	$(VENV)/bin/mc-envs warmup

clean:
	rm -rf $(VENV) build dist *.egg-info docs/_build docs/envs
