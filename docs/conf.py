"""Sphinx configuration of the mc-envs documentation site (``make docs``).

Sphinx with MyST (pages in Markdown) and the furo theme, as Gymnasium and PettingZoo use. The env
pages under ``envs/`` are written at build time from the env docstrings by ``_ext/env_pages.py``;
the API reference comes from the docstrings through autodoc and napoleon (Google style). No
extension fetches anything from the network.
"""

from __future__ import annotations

import sys
from pathlib import Path

DOCS = Path(__file__).resolve().parent
sys.path.insert(0, str(DOCS.parent))  # mc_envs and agents of this source tree
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
