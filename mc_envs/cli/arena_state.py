"""The record of a resumable arena match: ``DIR/arena.json`` beside the games' SGF files.

The file is JSON, rewritten atomically (a temporary file, then a rename) after every finished
game, so a killed match loses only the games in progress::

    {"format": "mc-envs/arena", "version": 1,
     "config": {"env_id", "env_kwargs", "agent_a", "agent_b", "seed", "iterations", "time",
                "games"},
     "games": [{"index", "black", "result", "moves", "score", "margin", "gtp_score",
                "disagree", "seconds", "sgf"}, ...],
     "summary": {...}}

A game entry: ``index`` from 0 (game ``index + 1``, its seeds from it); ``black`` ``"A"`` or
``"B"`` (who played first); ``result`` agent A's, +1, 0 or -1; ``moves`` the actions; Go only:
``score`` our Tromp-Taylor result (``"B+3.5"``), ``margin`` Black's, ``gtp_score`` a GTP side's
own ``final_score`` (else null), ``disagree`` whether that names another winner (null when
there is none); ``seconds`` the game's time; ``sgf`` its file name in DIR (null without one).

:func:`open_record` starts a match there, or (``resume``) continues it: the same config is
required (``games`` may differ: a match can be extended). Every refusal is a one-line
:class:`ArenaStateError` naming the file, and leaves the file untouched.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any, NamedTuple, TypedDict, cast

from mc_envs.records import write_atomic

FORMAT = "mc-envs/arena"
VERSION = 1
STATE_NAME = "arena.json"
_NUMBER = (int, float)
_NONE = type(None)
CONFIG_FIELDS: dict[str, tuple[type, ...]] = {
    "env_id": (str,),
    "env_kwargs": (dict,),
    "agent_a": (str,),
    "agent_b": (str,),
    "seed": (int,),
    "iterations": (int, _NONE),
    "time": (*_NUMBER, _NONE),
    "games": (int,),
}
ENTRY_FIELDS: dict[str, tuple[type, ...]] = {
    "index": (int,),
    "black": (str,),
    "result": _NUMBER,
    "moves": (list,),
    "score": (str, _NONE),
    "margin": (*_NUMBER, _NONE),
    "gtp_score": (str, _NONE),
    "disagree": (bool, _NONE),
    "seconds": _NUMBER,
    "sgf": (str, _NONE),
}


class GoScore(TypedDict):
    """A game's Go fields (all None in other games)."""

    score: str | None
    margin: float | None
    gtp_score: str | None
    disagree: bool | None


class GameEntry(GoScore):
    """A finished game of a match (the module docstring says what each field holds)."""

    index: int
    black: str
    result: int
    moves: list[int]
    seconds: float
    sgf: str | None


class MatchConfig(TypedDict):
    """A match's config: what a resumed match must have been started with (``games`` aside)."""

    env_id: str
    env_kwargs: dict[str, object]
    agent_a: str
    agent_b: str
    seed: int
    iterations: int | None
    time: float | None
    games: int


class Tally(TypedDict):
    """Agent A's results over some games (:func:`mc_envs.cli.arena.summary`)."""

    games: int
    wins: int
    draws: int
    losses: int
    score: float  # (wins + draws / 2) a game
    interval: tuple[float, float]  # the score's 95% Wilson interval


class Summary(Tally):
    """A match's summary: agent A's :class:`Tally` over every game, then by colour."""

    as_black: Tally
    as_white: Tally
    disagreements: int  # the games where a GTP side's final_score names another winner
    compared: int  # the games with a GTP side's final_score
    seconds_per_game: float


class ArenaStateError(ValueError):
    """A match record that cannot be used: one line naming the file and what is wrong."""


class Record(NamedTuple):
    """An open match record.

    Attributes:
        path: the JSON file.
        config: the match's config (see the module docstring).
        games: the finished games' entries by index.
    """

    path: Path
    config: MatchConfig
    games: dict[int, GameEntry]

    def save(self, summary: Summary) -> None:
        """Writes the record (atomically) with ``summary``."""
        games = ",\n  ".join(json.dumps(self.games[g]) for g in sorted(self.games))
        head = {"format": FORMAT, "version": VERSION, "config": self.config}
        text = json.dumps(head, indent=1)[:-2]  # one game a line: the file stays readable
        text += f',\n "games": [\n  {games}\n ],\n "summary": {json.dumps(summary)}\n}}\n'
        write_atomic(self.path, text)


def open_record(folder: str | Path, config: MatchConfig, *, resume: bool) -> Record:
    """The record of the match in ``folder`` (``arena.json``), new or resumed.

    Raises:
        ArenaStateError: an unreadable or inconsistent file; without ``resume``, a file with
            finished games (never overwritten); with it, a config that differs (naming the field).
    """
    path = Path(folder) / STATE_NAME
    if not path.exists():
        return Record(path, config.copy(), {})
    saved, games = load(path)
    if not resume:
        if games:
            raise ArenaStateError(
                f"{path}: a match with {len(games)} finished games is recorded there; add "
                "--resume to continue it, or choose another --sgf-dir"
            )
        return Record(path, config.copy(), {})
    check_config(path, saved, config)
    return Record(path, {**saved, "games": config["games"]}, games)


def check_config(path: Path, saved: MatchConfig, wanted: MatchConfig) -> None:
    """Refuses to resume a match with another config (``games`` may differ).

    Raises:
        ArenaStateError: naming the first field that differs, with both values.
    """
    recorded: Mapping[str, object] = saved  # read field by field
    given: Mapping[str, object] = wanted
    fields = [(k, recorded[k], given[k]) for k in CONFIG_FIELDS if k not in ("games", "env_kwargs")]
    kwargs = sorted(set(saved["env_kwargs"]) | set(wanted["env_kwargs"]))
    fields += [(k, saved["env_kwargs"].get(k), wanted["env_kwargs"].get(k)) for k in kwargs]
    for key, old, new in fields:
        if old != new:
            raise ArenaStateError(
                f"{path}: --resume: the recorded match has {key} {old!r}, this command "
                f"{new!r}; resume with the match's settings, or choose another --sgf-dir"
            )


def load(path: Path) -> tuple[MatchConfig, dict[int, GameEntry]]:
    """The config and the finished games of a record file, checked.

    Raises:
        ArenaStateError: not JSON, not a record of this format and version, a missing or
            mistyped field, a repeated game index.
    """
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ArenaStateError(f"{path}: cannot be read ({exc.strerror})") from None
    except UnicodeDecodeError:
        raise ArenaStateError(f"{path}: not UTF-8 text") from None
    except json.JSONDecodeError as exc:
        raise ArenaStateError(
            f"{path}: not JSON ({exc.msg} at line {exc.lineno}, column {exc.colno})"
        ) from None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise ArenaStateError(f'{path}: not an arena record (no "format": "{FORMAT}")')
    if data.get("version") != VERSION:
        raise ArenaStateError(
            f"{path}: version {data.get('version')!r}, this mc-envs reads {VERSION}"
        )
    config = cast(MatchConfig, _checked(path, data.get("config"), CONFIG_FIELDS, "config"))
    if not isinstance(data.get("games"), list):
        raise ArenaStateError(f'{path}: "games" is not a list')
    games: dict[int, GameEntry] = {}
    for n, entry in enumerate(data["games"]):
        entry = _checked(path, entry, ENTRY_FIELDS, f"games[{n}]")
        index = entry["index"]
        if index < 0 or index in games or entry["black"] not in ("A", "B"):
            what = "a negative index" if index < 0 else "black not A or B"
            what = f"index {index} repeated" if index in games else what
            raise ArenaStateError(f"{path}: games[{n}]: {what}")
        if entry["result"] not in (-1, 0, 1) or not all(type(m) is int for m in entry["moves"]):
            raise ArenaStateError(f"{path}: games[{n}]: result not -1, 0 or 1, or moves not ints")
        games[index] = cast(GameEntry, entry)  # each field checked above
    return config, games


def _checked(
    path: Path, value: object, fields: dict[str, tuple[type, ...]], where: str
) -> dict[str, Any]:  # JSON, its fields' types checked here
    """``value`` if it is an object with each field of its type (bools are not numbers)."""
    if not isinstance(value, dict):
        raise ArenaStateError(f"{path}: {where} is not an object")
    for key, types in fields.items():
        if key not in value:
            raise ArenaStateError(f"{path}: {where} has no {key!r}")
        item = value[key]
        if not isinstance(item, types) or (isinstance(item, bool) and bool not in types):
            names = " or ".join("null" if t is _NONE else t.__name__ for t in types)
            raise ArenaStateError(f"{path}: {where}.{key} is {item!r}, not {names}")
    return value
