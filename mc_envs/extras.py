"""Optional dependencies: importing one that is missing raises :class:`MissingExtra`, an
ImportError whose message names the extra of mc-envs that installs it and the pip command.

A leaf module (standard library only), so every part of the package can use it."""

from __future__ import annotations

import importlib
from types import ModuleType


class MissingExtra(ImportError):
    """An optional dependency is not installed.

    Attributes:
        module: the module that could not be imported (``"pygame"``).
        extra: the extra of mc-envs that installs it (``"render"``).
        hint: the pip command, ``pip install "mc-envs[render]"``.
    """

    def __init__(self, what: str, module: str, extra: str) -> None:
        self.module, self.extra = module, extra
        self.hint = f'pip install "mc-envs[{extra}]"'
        super().__init__(f"{what} needs {module}: {self.hint}", name=module)


def require(module: str, extra: str, what: str) -> ModuleType:
    """Imports ``module`` and returns it.

    Args:
        module: the module to import (``"pygame"``, ``"imageio.v3"``).
        extra: the extra of mc-envs that installs it.
        what: what needs it, the start of the message (``"mc_envs.pettingzoo"``).

    Raises:
        MissingExtra: the module (or one it needs) cannot be imported.
    """
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise MissingExtra(what, module.split(".")[0], extra) from exc
