"""Go's rules in lockstep with pgx's Go, an independent implementation (JAX): random games, with
every step compared (legal moves, board, captures, observation, player, end, winner) and every
case where pgx's superko differs from ours checked (benchmarks/go_lockstep.py says how; it runs
10,000 games and more with ``--resume``). JAX compiles pgx's batched step once per board size."""

from __future__ import annotations

import pytest

pytest.importorskip("pgx")

from benchmarks.go_lockstep import lockstep  # noqa: E402


@pytest.mark.timeout(300)
@pytest.mark.parametrize(("size", "games", "seed"), [(9, 100, 1), (5, 200, 1)])
def test_random_games_agree_with_pgx(size: int, games: int, seed: int) -> None:
    stats = lockstep(games, size=size, seed=seed)
    assert stats["games"] == games and stats["moves"] > 20 * games
    assert stats["two_passes"] > 0 and stats["move_limit"] > 0  # both ends compared
    assert 0 < stats["black_wins"] < games  # and both winners
    assert stats["captures"] > games  # captures compared
    # pgx's superko moves (in its mask, ending the game there) were met and checked
    assert stats["superko"] > 0
    # and its capture counter's double counts (a chain touching the move on two sides)
    assert stats["pgx_counted_twice"] > 0
