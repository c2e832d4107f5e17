"""The package's version: the one source, read by pyproject.toml (without importing mc_envs) and
re-exported as ``mc_envs.__version__``."""

__version__ = "0.2.0"
