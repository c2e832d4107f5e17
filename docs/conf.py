"""Sphinx configuration of the mc-envs documentation site (``make docs``).

Sphinx with MyST (pages in Markdown) and the furo theme, as Gymnasium and PettingZoo use. The env
pages under ``envs/`` are written at build time from the env docstrings by ``_ext/env_pages.py``;
the API reference comes from the docstrings through autodoc and napoleon (Google style). No
extension fetches anything from the network.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

DOCS = Path(__file__).resolve().parent
sys.path.insert(0, str(DOCS.parent))  # mc_envs of this source tree
sys.path.insert(0, str(DOCS / "_ext"))

import mc_envs  # noqa: E402

project = "mc-envs"
author = "mc-envs contributors"
copyright = "mc-envs contributors"
release = version = mc_envs.__version__

extensions = ["myst_parser", "sphinx.ext.autodoc", "sphinx.ext.napoleon", "env_pages"]
source_suffix = {".md": "markdown"}
exclude_patterns = ["_build"]
myst_heading_anchors = 3
smartquotes = False  # the docstrings' quotes as written (Morpion's backslash diagonal)

html_theme = "furo"
html_title = f"mc-envs {release}"
html_static_path: list[str] = []

autodoc_member_order = "bysource"
autodoc_typehints = "signature"
autodoc_default_options = {"show-inheritance": False}
napoleon_google_docstring = True
napoleon_numpy_docstring = False

# The extras' packages. mc_envs.vector.sb3 and mc_envs.pettingzoo import theirs at module top, the
# rest of the package imports its extras lazily. autodoc stands in for those not installed, so that
# `pip install ".[docs]"` alone builds the site (tests/test_docs.py builds it with all of them
# unimportable); where they are installed (`make test`), the pages show their real signatures.
EXTRAS = (
    "stable_baselines3",
    "sb3_contrib",
    "pettingzoo",
    "torch",
    "jax",
    "optax",
    "ray",
    "pygame",
    "imageio",
    "moviepy",
    "matplotlib",
    "pyspiel",
    "pgx",
)


def _installed(name: str) -> bool:
    try:
        return importlib.util.find_spec(name) is not None
    except ImportError:
        return False


autodoc_mock_imports = [name for name in EXTRAS if not _installed(name)]
