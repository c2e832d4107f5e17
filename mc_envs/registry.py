"""The one table of games: every front end (registration, the ``mc-envs`` command, play, replay,
drawing, the terminal) reads :data:`GAMES`, so a game is described here once.

Registration uses string entry points, so importing this module imports no game and no pygame.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import gymnasium as gym


@dataclass(frozen=True)
class Flag:
    """A command-line flag that sets an env argument (``--name VALUE`` -> ``name=value``).

    Attributes:
        kind: ``"int"``, ``"file"`` (the argument is the file's text) or ``"text"`` (text, or the
            text of a file of that name).
        help: what the value is.
    """

    kind: str
    help: str


FLAGS: dict[str, Flag] = {
    "position": Flag("int", "standard position 1..20"),
    "board": Flag("file", "board file (one row a line, digits)"),
    "size": Flag("int", "the board's side: Sudoku 9 or 16, Go 5 to 19"),
    "puzzle": Flag("text", "puzzle text or file"),
    "depth": Flag("int", "depth of the tree"),
    "k": Flag("int", "number of parts"),
}


@dataclass(frozen=True)
class Game:
    """One game as the front ends know it.

    Attributes:
        name: the command-line name (``mc-envs solve NAME``, ``play NAME``).
        env_id: the Gymnasium id.
        entry_point: ``module:Class`` of the env.
        game: the env's ``game`` attribute (which drawing an env gets).
        drawing: the drawing module, ``mc_envs.render.draw.<drawing>``.
        kwargs: the id's registered keyword arguments.
        cli: what the command-line name adds to them (``sudoku16``: ``size=16``).
        play: play's defaults (the window), over ``cli``.
        flags: the command-line flags (keys of :data:`FLAGS`) the game takes.
        aliases: other command-line names.
        players: 1 (a puzzle: ``solve``) or 2 (``play --terminal``, ``arena``).
        opponent: play's default opponent (an agent spec) in two-player games.
        cell: the drawing's pixels per cell (theme keys -> pixels).
        until_solved: ``solve`` without a budget restarts until ``max_score`` and shows the end.
    """

    name: str
    env_id: str
    entry_point: str
    game: str
    drawing: str
    kwargs: dict = field(default_factory=dict)
    cli: dict = field(default_factory=dict)
    play: dict = field(default_factory=dict)
    flags: tuple[str, ...] = ()
    aliases: tuple[str, ...] = ()
    players: int = 1
    opponent: str | None = None
    cell: dict = field(default_factory=dict)
    until_solved: bool = False


_SUDOKU = "mc_envs.envs.sudoku:SudokuEnv"
_MORPION = "mc_envs.envs.morpion:MorpionSolitaireEnv"
GAMES: tuple[Game, ...] = (
    Game("samegame", "mc_envs/SameGame-v0", "mc_envs.envs.samegame:SameGameEnv", "SameGame",
         "samegame", flags=("position", "board"), cell={"samegame": 32}),
    Game("morpion5d", "mc_envs/MorpionSolitaire5D-v0", _MORPION, "MorpionSolitaire", "morpion",
         kwargs={"variant": "5D"}, aliases=("morpion",), cell={"morpion": 20}),
    Game("morpion5t", "mc_envs/MorpionSolitaire5T-v0", _MORPION, "MorpionSolitaire", "morpion",
         kwargs={"variant": "5T"}),
    Game("sudoku", "mc_envs/Sudoku-v0", _SUDOKU, "Sudoku", "sudoku", play={"branching": "all"},
         flags=("size", "puzzle"), cell={"sudoku9": 48, "sudoku16": 36}, until_solved=True),
    Game("sudoku16", "mc_envs/Sudoku-v0", _SUDOKU, "Sudoku", "sudoku", cli={"size": 16},
         play={"branching": "all"}, flags=("size", "puzzle"), until_solved=True),
    Game("tictactoe", "mc_envs/TicTacToe-v0", "mc_envs.envs.tictactoe:TicTacToeEnv", "TicTacToe",
         "tictactoe", aliases=("ttt",), players=2, opponent="uct", cell={"tictactoe": 120}),
    Game("connect4", "mc_envs/ConnectFour-v0", "mc_envs.envs.connect_four:ConnectFourEnv",
         "ConnectFour", "connect_four", aliases=("connect_four", "connectfour"), players=2,
         opponent="uct", cell={"connect_four": 72}),
    Game("leftmove", "mc_envs/LeftMove-v0", "mc_envs.envs.abstract:LeftMoveEnv", "LeftMove",
         "abstract", flags=("depth",), cell={"abstract": 40}),
    Game("leftmostpath", "mc_envs/LeftmostPath-v0", "mc_envs.envs.abstract:LeftmostPathEnv",
         "LeftmostPath", "abstract", flags=("depth",)),
    Game("weakschur", "mc_envs/WeakSchur-v0", "mc_envs.envs.weak_schur:WeakSchurEnv", "WeakSchur",
         "weak_schur", flags=("k",), aliases=("weak_schur", "schur"), cell={"weak_schur": 24}),
    Game("go", "mc_envs/Go-v0", "mc_envs.envs.go:GoEnv", "Go", "go", aliases=("go9",), players=2,
         opponent="uct", flags=("size",), cell={"go": 48}),
)  # fmt: skip

# id -> (entry point, registered kwargs), derived from GAMES: one entry per id.
ENVS: dict[str, tuple[str, dict]] = {}
for _g in GAMES:
    ENVS.setdefault(_g.env_id, (_g.entry_point, dict(_g.kwargs)))


def names(players: int | None = None) -> list[str]:
    """The command-line names (of one- or two-player games only, if ``players`` is given)."""
    return [g.name for g in GAMES if players is None or g.players == players]


def find(name: str) -> Game:
    """The game of a command-line name, an alias (any case) or an env id.

    Raises:
        ValueError: an unknown name, naming the known ones.
    """
    key = name.lower()
    for g in GAMES:
        if key == g.name or key in g.aliases or name == g.env_id:
            return g
    raise ValueError(f"unknown game {name!r}; choose one of {names()}")


def canonical(name: str) -> str:
    """The command-line name of a name or alias (for argparse's ``type=``)."""
    return find(name).name


def drawing_of(game: str | None) -> str:
    """The drawing module name of an env's ``game`` attribute (None: the env has none).

    Raises:
        ValueError: no game of the table has that ``game``.
    """
    for g in GAMES:
        if g.game == game:
            return g.drawing
    raise ValueError(
        f"no drawing for game {game!r}; there are drawings for {[g.game for g in GAMES]}"
    )


def register_all() -> None:
    """Registers every id of :data:`ENVS` (idempotent)."""
    for env_id, (entry_point, kwargs) in ENVS.items():
        if env_id not in gym.registry:
            gym.register(
                id=env_id,
                entry_point=entry_point,
                vector_entry_point="mc_envs.vector.entry:" + entry_point.partition(":")[2],
                kwargs=dict(kwargs),
            )
