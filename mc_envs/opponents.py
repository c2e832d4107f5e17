"""Players by name: what turns ``opponent="uct"`` (and ``mc-envs play --vs uct``) into a player.

The envs never import the planners; the planners come in from above and register here.
:mod:`mc_envs.agents.specs` registers every agent spec it parses (``"random"``, ``"uct-hard"``,
``"gtp:<command line>"`` ...) when :mod:`mc_envs.agents` is imported. A name nobody has registered
yet makes the registry load the entry points of the group ``mc_envs.opponents`` (this
distribution declares one, ``mc_envs.agents.specs:register_opponents``), so
``gym.make("mc_envs/ConnectFour-v0", opponent="uct")`` works in a program that never imported the
agents (from a source tree that pip has not installed, the group as its ``pyproject.toml``
declares it). Another distribution can add players the same way, naming a function that calls
:func:`register`, in its ``pyproject.toml``::

    [project.entry-points."mc_envs.opponents"]
    mine = "my_package.players:register"
"""

from __future__ import annotations

from importlib.metadata import EntryPoint, entry_points
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    import gymnasium as gym

GROUP = "mc_envs.opponents"
PREFIX_END = ":"


class Player(Protocol):
    """A player: chooses a move of the game ``env`` is in (``env`` unchanged when it returns)."""

    def act(self, env: gym.Env) -> int:
        """The chosen action."""
        ...


class Factory(Protocol):
    """Makes the player a name stands for (the name given in full, a prefix's argument too)."""

    def __call__(self, spec: str, *, seed: int) -> Player: ...


_FACTORIES: dict[str, Factory] = {}
_loaded: set[str] = set()  # the entry points already loaded


def register(name: str, factory: Factory) -> None:
    """Registers a player under ``name`` (case-insensitive), replacing any before it.

    Args:
        name: a whole name (``"uct-hard"``), or a prefix ending in ``":"`` (``"gtp:"``) that stands
            for every name it starts (``"gtp:gnugo --mode gtp"``).
        factory: called with the name as given and a seed each time a player is needed.
    """
    _FACTORIES[name.lower()] = factory


def known() -> list[str]:
    """The names registered so far, a prefix written as ``"gtp:<argument>"``."""
    return [n + "<argument>" if n.endswith(PREFIX_END) else n for n in _FACTORIES]


def _lookup(spec: str) -> Factory | None:
    key = spec.lower()
    if key in _FACTORIES:
        return _FACTORIES[key]
    head, sep, _ = key.partition(PREFIX_END)
    return _FACTORIES.get(head + sep) if sep else None


def declared_in_source() -> list[EntryPoint]:
    """The group as the ``pyproject.toml`` beside the package declares it: what the installed
    metadata would say, for mc_envs run from a source tree that pip has not installed (or whose
    installed metadata predates the group). Empty for an installed wheel."""
    path = Path(__file__).resolve().parent.parent / "pyproject.toml"
    if not path.is_file():
        return []
    lines = iter(path.read_text().splitlines())
    found = []
    for line in lines:
        if line.strip() == f'[project.entry-points."{GROUP}"]':
            for entry in lines:
                if entry.startswith("["):
                    break
                name, sep, value = entry.partition("=")
                if sep and not name.lstrip().startswith("#"):
                    found.append(EntryPoint(name.strip(), value.strip().strip('"'), GROUP))
    return found


def _load_entry_points() -> None:
    for point in [*entry_points(group=GROUP), *declared_in_source()]:
        if point.value not in _loaded:
            _loaded.add(point.value)
            point.load()()


def find(spec: str) -> Factory:
    """The factory of a name, loading the group's entry points if no one registered it yet.

    Raises:
        ValueError: an unknown name, naming the known ones.
    """
    factory = _lookup(str(spec))
    if factory is None:
        _load_entry_points()
        factory = _lookup(str(spec))
    if factory is None:
        raise ValueError(f"unknown agent {spec!r}; use one of {known()}")
    return factory


def resolve(spec: str, *, seed: int = 0) -> Player:
    """The player a name stands for (see :func:`find`), made with ``seed``.

    Raises:
        ValueError: an unknown name, naming the known ones.
    """
    return find(spec)(str(spec), seed=seed)
