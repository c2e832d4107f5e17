"""Go's rules in lockstep with OpenSpiel's ``go`` (C++, through pyspiel), an independent
implementation: random games, every step compared (legal moves, player to move, board and
captures, end), and at the end the returns.

OpenSpiel numbers its points ``row * n + col`` with row 0 at the *bottom* (action 0 is ``a1``),
pass ``n * n``; ours has row 0 at the top, so its action ``r * n + c`` is our
``(n - 1 - r) * n + c``. Its ``max_game_length`` (history length, passes included) is set to our
``max_moves``.

Where OpenSpiel differs from us by design (its source, ``open_spiel/games/go/go.cc`` and
``go_board.cc``): its legal moves refuse only the simple ko (the point of a single stone just
captured by a stone played into an eye); any other move that recreates an earlier whole-board
position stays legal, and playing it ends the game as a draw (``superko_``). We refuse every such
move (positional superko). So a move in OpenSpiel's list and not in ours must be such a case:
each one is checked, not skipped: our env refuses it naming positional superko, OpenSpiel, playing
it on a clone, recreates a board this game has already had, and ends the game there, a draw. A move
in our list and not in OpenSpiel's fails the test. The moves on empty points refused on both
sides are counted by our env's reason: suicide, or superko (there, OpenSpiel's simple ko).

Scoring: both are Tromp-Taylor area scoring (stones plus empty regions reaching one colour only),
komi to White; a half-point komi leaves no draw, and the returns (+1 / -1) must be equal. Older
OpenSpiel sources stopped a region's flood fill once it had reached both colours, which could
count the rest of that region as one colour's territory; two such positions are checked below.

The move cap, by design too: OpenSpiel's ``max_game_length`` ends a game as a terminal, scored
one; our env truncates it there (``truncated``, reward 0, ``info["max_moves_reached"]``), and its
``returns()`` give the same Tromp-Taylor score (the kernel's adjudication, which searches use),
checked equal to OpenSpiel's returns as at any end.
"""

from __future__ import annotations

import numpy as np
import pytest

pyspiel = pytest.importorskip("pyspiel")

import gymnasium as gym  # noqa: E402

import mc_envs  # noqa: E402, F401  (registers the envs)
from mc_envs import IllegalActionError  # noqa: E402


def _ours_of(size: int) -> np.ndarray:
    """Our action for each of OpenSpiel's (rows counted from the bottom there)."""
    n2 = size * size
    theirs = np.arange(n2 + 1)
    row, col = theirs // size, theirs % size
    return np.where(theirs == n2, n2, (size - 1 - row) * size + col)


def _their_board(state, size: int) -> np.ndarray:
    """OpenSpiel's board from its observation tensor (planes Black, White, empty, White to move;
    rows from the bottom), as ours: row 0 at the top, 0 empty, 1 Black, 2 White."""
    planes = np.asarray(state.observation_tensor(0)).reshape(4, size, size)
    assert (planes[:3].sum(axis=0) == 1).all()
    return (planes[0] + 2 * planes[1]).astype(np.int8)[::-1]


def _lockstep(size: int, games: int, seed: int) -> dict[str, int]:
    """Plays ``games`` random games on both sides (moves drawn from our legal ones); returns
    counts. Raises AssertionError at the first difference, naming the game and its moves."""
    max_moves = 2 * size * size
    game = pyspiel.load_game("go", {"board_size": size, "komi": 7.5, "max_game_length": max_moves})
    env = gym.make("mc_envs/Go-v0", size=size, max_moves=max_moves, illegal_action="raise")
    env = env.unwrapped
    ours_of = _ours_of(size)
    rng = np.random.default_rng(seed)
    stats = dict.fromkeys(
        ("games", "moves", "captures", "two_passes", "move_limit", "black_wins", "superko"), 0
    )
    stats.update(suicide=0, ko=0)
    for g in range(games):
        env.reset(seed=seed * 100_003 + g)
        state = game.new_initial_state()
        moves: list[int] = []
        seen = {env.board.tobytes()}
        while True:
            where = f"{size}x{size} seed {seed} game {g} after moves {moves}"
            board = env.board
            assert (board == _their_board(state, size)).all(), (where, "board")
            over = len(env.legal_actions()) == 0
            assert state.is_terminal() == over, (where, "end")
            if over:
                break
            assert state.current_player() == env.current_player, (where, "player")
            ours = set(env.legal_actions().tolist())
            theirs = {int(ours_of[a]): a for a in state.legal_actions()}
            assert ours <= set(theirs), (where, "legal here, not in OpenSpiel", ours - set(theirs))
            refused = set(np.flatnonzero(board.ravel() == 0).tolist()) - ours
            assert set(theirs) - ours <= refused, (where, "OpenSpiel plays on a stone")
            for a in sorted(refused):
                if a in theirs:  # OpenSpiel's superko moves: checked, then left unplayed
                    _check_superko(env, state, theirs[a], a, seen, size, where)
                    stats["superko"] += 1
                else:  # refused on both sides: suicide, or the simple ko
                    stats[_refusal(env, a)] += 1
            a = int(rng.choice(sorted(ours)))
            stones = np.count_nonzero(board)
            step = env.step(a)
            state.apply_action(theirs[a])
            moves.append(a)
            seen.add(env.board.tobytes())
            stats["moves"] += 1
            stats["captures"] += stones + int(a < size * size) - np.count_nonzero(env.board)
        where = f"{size}x{size} seed {seed} game {g} moves {moves}"
        returns = env.returns()
        assert list(state.returns()) == list(returns), (where, "returns", state.returns())
        assert returns[0] != 0, (where, "a draw with komi 7.5")
        stats["games"] += 1
        stats["black_wins"] += returns[0] > 0
        two_passes = len(moves) >= 2 and moves[-1] == moves[-2] == size * size
        assert two_passes or len(moves) == max_moves, (where, "ended otherwise")
        stats["two_passes" if two_passes else "move_limit"] += 1
        # OpenSpiel's max_game_length ends the game, terminal and scored; our env truncates it
        # (reward 0) and its returns() hold the same score, the kernel's adjudication
        _, reward, terminated, truncated, info = step
        assert (terminated, truncated) == (two_passes, not two_passes), (where, "end kind")
        assert two_passes or (reward == 0.0 and info["max_moves_reached"]), (where, "cap")
    return stats


def _refusal(env, action: int) -> str:
    """Why our env refuses a move on an empty point (it raises, changing nothing)."""
    with pytest.raises(IllegalActionError) as refused:
        env.step(action)
    message = str(refused.value)
    assert "suicide" in message or "positional superko" in message, message
    return "suicide" if "suicide" in message else "ko"


def _check_superko(env, state, their_action: int, action: int, seen, size, where) -> None:
    """A move OpenSpiel allows and we refuse: a positional superko move on both sides."""
    what = (where, f"move {action} ({env.action_to_string(action)}), OpenSpiel's {their_action}")
    before = env.board
    with pytest.raises(IllegalActionError, match="positional superko"):
        env.step(action)
    assert (env.board == before).all(), (*what, "the refused move changed our board")
    trial = state.clone()
    trial.apply_action(their_action)
    assert _their_board(trial, size).tobytes() in seen, (*what, "no earlier position")
    assert trial.is_terminal() and list(trial.returns()) == [0.0, 0.0], (
        *what,
        "OpenSpiel did not end it as a draw",
    )


@pytest.mark.timeout(120)
@pytest.mark.parametrize(("size", "games", "seed"), [(9, 500, 1), (7, 300, 1), (5, 1000, 1)])
def test_random_games_agree_with_openspiel(size: int, games: int, seed: int) -> None:
    stats = _lockstep(size, games, seed)
    assert stats["games"] == games and stats["moves"] > 20 * games
    assert stats["two_passes"] > 0 and stats["move_limit"] > 0  # both ends compared
    assert 0 < stats["black_wins"] < games  # and both winners
    assert stats["captures"] > games  # captures compared
    assert stats["superko"] > 0  # OpenSpiel's superko moves met and checked
    assert stats["ko"] > 0 and stats["suicide"] > 0  # and moves both refuse


def test_action_numbering() -> None:
    """OpenSpiel's action 0 is a1 (bottom left), ours the top-left point: the map agrees with
    both sides' own names for the points."""
    size = 9
    game = pyspiel.load_game("go", {"board_size": size, "komi": 7.5})
    state = game.new_initial_state()
    env = gym.make("mc_envs/Go-v0", size=size).unwrapped
    env.reset(seed=0)
    ours_of = _ours_of(size)
    for a in (0, 8, 72, 80, 40, 81):
        theirs = state.action_to_string(0, a).split()[1]
        assert theirs.lower() == env.action_to_string(int(ours_of[a])).lower()


# Positions that OpenSpiel's older scoring (a flood fill that stopped as soon as a region had
# reached both colours, leaving the rest of the region to be counted again as one colour's
# territory) would give to the other player, by a replay of that code on random final boards;
# the installed OpenSpiel and we score them as Tromp-Taylor does. Our actions (row 0 at the top), pass = 25, ending with two passes.
OLD_FLOOD_FILL_CASES = [
    ([3, 1, 25, 25], (1, 1)),  # B d5, W b5: every empty point touches both colours
    ([5, 2, 6, 21, 10, 25, 11, 25, 13, 25, 16, 25, 25], (6, 2)),
]


@pytest.mark.parametrize(("moves", "area"), OLD_FLOOD_FILL_CASES)
def test_scoring_of_regions_touching_both_colours(moves: list[int], area: tuple[int, int]) -> None:
    size = 5
    game = pyspiel.load_game("go", {"board_size": size, "komi": 7.5})
    state = game.new_initial_state()
    env = gym.make("mc_envs/Go-v0", size=size, illegal_action="raise").unwrapped
    env.reset(seed=0)
    theirs_of = {int(o): t for t, o in enumerate(_ours_of(size))}
    for a in moves:
        env.step(a)
        state.apply_action(theirs_of[a])
    assert state.is_terminal() and len(env.legal_actions()) == 0
    assert (env.board == _their_board(state, size)).all()
    assert env.area() == area
    assert list(state.returns()) == list(env.returns()) == [-1.0, 1.0]  # White by komi
