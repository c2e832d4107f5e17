"""NRPA's variants (mc_envs.agents.nested.nrpa_options): each on a problem whose answer is known, compiled and
generic paths agreeing, resumable, and plain NRPA unchanged when every option keeps its default."""

import json

import numpy as np
import pytest
from helpers import best_score, replayed_score, samegame

import mc_envs  # noqa: F401
from mc_envs.agents import NRPA
from mc_envs.envs.samegame import SameGameEnv
from mc_envs.games import samegame as sg
from mc_envs.games import samegame_select as sgs

VARIANTS = [
    {"bias": -0.5},
    {"tau": 2.0},
    {"bias": 0.7, "tau": 0.5},
    {"stabilize": 3},
    {"repeats": 2},
    {"codes": "action"},
    {"policy": "tabu-late"},
]


def group_sizes(env):
    """Every legal action's group size, by flood fill over the board (the test's own)."""
    board = env.board
    rows, cols = board.shape
    sizes = {}
    for a in env.legal_actions():
        r, c = divmod(int(a), cols)
        seen, todo = {(r, c)}, [(r, c)]
        while todo:
            y, x = todo.pop()
            for q in ((y - 1, x), (y + 1, x), (y, x - 1), (y, x + 1)):
                inside = 0 <= q[0] < rows and 0 <= q[1] < cols
                if inside and q not in seen and board[q] == board[r, c]:
                    seen.add(q)
                    todo.append(q)
        sizes[int(a)] = len(seen)
    return sizes


@pytest.mark.parametrize("variant", VARIANTS, ids=lambda v: ",".join(f"{k}={v[k]}" for k in v))
def test_compiled_and_generic_paths_agree(variant):
    env = samegame(3)
    kwargs = {"policy": "tabu", **variant}
    fast, generic = (
        NRPA(level=2, iterations=8, seed=5, compiled=c, **kwargs).search(env, playouts=150)
        for c in (True, False)
    )
    assert (fast.score, fast.actions, fast.playouts) == (
        generic.score,
        generic.actions,
        generic.playouts,
    )
    assert replayed_score(env, fast.actions) == fast.score


@pytest.mark.parametrize(  # not a selective policy or a strong bias: they may rule it out
    "variant",
    [v for v in VARIANTS if "policy" not in v and v.get("bias", 0) <= 0],
    ids=lambda v: ",".join(f"{k}={v[k]}" for k in v),
)
@pytest.mark.parametrize("seed", range(2))
def test_every_variant_finds_the_optimum_of_small_boards(variant, seed):
    env = SameGameEnv(rows=5, cols=5, colors=3)
    env.reset(seed=seed)
    optimum = best_score(env, {})
    kwargs = {"policy": "random", **variant}
    result = NRPA(level=2, iterations=30, seed=seed, **kwargs).search(env, playouts=20_000)
    assert result.score == optimum
    assert replayed_score(env, result.actions) == result.score


@pytest.mark.parametrize("sign", [1, -1])
def test_a_strong_bias_plays_the_largest_or_the_smallest_group(sign):
    env = samegame(1)
    sizes = group_sizes(env)
    first = NRPA(level=1, iterations=1, seed=0, policy="random", bias=sign * 60.0).search(env)
    chosen = sizes[first.actions[0]]
    assert chosen == (max(sizes.values()) if sign > 0 else min(sizes.values()))
    out = np.zeros(len(sizes))
    moves = env.legal_actions()
    env.move_bias(moves, len(moves), out)
    assert out.tolist() == [sizes[int(a)] - 2 for a in moves]


def test_a_high_temperature_flattens_the_policy_and_zero_bias_is_plain_nrpa():
    env = samegame(2)
    plain = NRPA(level=2, iterations=10, seed=1).search(env, playouts=300)
    same = NRPA(level=2, iterations=10, seed=1, tau=1.0, bias=0.0).search(env, playouts=300)
    assert (plain.score, plain.actions) == (same.score, same.actions)
    hot = NRPA(level=2, iterations=10, seed=1, tau=1e9).search(env, playouts=300)
    sampled = NRPA(level=2, iterations=10, seed=1, alpha=0.0).search(env, playouts=300)
    assert (hot.score, hot.actions) == (sampled.score, sampled.actions)


def test_stabilized_nrpa_runs_p_rollouts_per_level_one_iteration():
    env = samegame(4)
    result = NRPA(level=2, iterations=7, seed=0, stabilize=3).search(env)
    assert result.stopped == "complete" and result.playouts == 7 * 7 * 3
    assert replayed_score(env, result.actions) == result.score


def test_limited_repetitions_count_returns_of_the_best_score():
    env = samegame(5)
    result = NRPA(level=1, iterations=500, seed=2, policy="tabu", repeats=4).search(env)
    assert result.playouts < 500  # a level-1 policy converges well before 500 rollouts
    assert result.extra["level_iterations"][1] == 500  # ended early, not cut by a budget
    assert replayed_score(env, result.actions) == result.score


def test_warm_start_begins_from_the_given_sequence():
    env = SameGameEnv(rows=5, cols=5, colors=3)
    env.reset(seed=3)
    optimum = best_score(env, {})
    best = NRPA(level=2, iterations=30, seed=3, policy="random").search(env, playouts=20_000)
    assert best.score == optimum
    warm = NRPA(level=1, iterations=2, seed=9, warm_start=best.actions).search(env)
    assert warm.score == optimum and warm.playouts == 2
    assert NRPA(warm_start=best.actions).params["warm_start"] == best.actions


def test_warm_start_refuses_an_illegal_or_overlong_sequence():
    env = samegame(1)
    illegal = [a for a in range(225) if a not in env.legal_actions()]
    with pytest.raises(ValueError, match=r"warm_start: move 0 \(\d+\) is illegal"):
        NRPA(warm_start=[illegal[0]]).search(env, playouts=10)
    with pytest.raises(
        ValueError, match=r"warm_start: (move \d+ \(0\) is illegal|the game is over)"
    ):
        NRPA(warm_start=[int(env.legal_actions()[0])] + [0] * 200).search(env, playouts=10)
    assert env.clone_state() == samegame(1).clone_state()


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"tau": 0}, "tau"),
        ({"tau": float("nan")}, "tau"),
        ({"bias": float("inf")}, "bias"),
        ({"stabilize": 0}, "stabilize"),
        ({"repeats": -1}, "repeats"),
        ({"repeats": 1.5}, "repeats"),
        ({"codes": "anchor"}, "codes"),
        ({"warm_start": "12"}, "warm_start"),
        ({"warm_start": [1, -2]}, "warm_start"),
    ],
)
def test_bad_options_are_refused_by_name(kwargs, match):
    with pytest.raises(ValueError, match=match):
        NRPA(**kwargs)


def test_variants_are_named_in_params_only_when_set():
    assert "bias" not in NRPA().params
    params = NRPA(bias=-0.5, stabilize=2, repeats=3, codes="action", tau=0.5).params
    assert {k: params[k] for k in ("bias", "stabilize", "repeats", "codes", "tau")} == {
        "bias": -0.5,
        "stabilize": 2,
        "repeats": 3,
        "codes": "action",
        "tau": 0.5,
    }


def test_resuming_a_variant_checkpoint_continues_the_same_search(tmp_path):
    env = samegame(8)
    kwargs = {"level": 3, "iterations": 8, "seed": 2, "bias": -0.3, "stabilize": 2, "repeats": 2}
    whole = NRPA(**kwargs).search(env, playouts=600)
    path = tmp_path / "ck.json"
    NRPA(**kwargs).search(env, playouts=277, checkpoint=path)
    assert "reps" in json.loads(path.read_text())["search"]
    resumed = NRPA(**kwargs).search(env, playouts=600, checkpoint=path, resume=True)
    assert (resumed.score, resumed.actions, resumed.playouts) == (whole.score, whole.actions, 600)
    with pytest.raises(ValueError, match="bias"):
        NRPA(**{**kwargs, "bias": 0.3}).search(env, checkpoint=path, resume=True)


def test_the_late_tabu_rule_allows_tabu_pairs_only_from_its_move():
    board = sg.parse_board("0010\n0110\n1022\n1122")  # digits 0, 1, 2 are colours 1, 2, 3
    env = SameGameEnv(board=board)
    env.reset()
    env.step(10)  # the 2 x 2 block of colour 3: then colour 1 has a pair, a triple, a loner
    state = env.state_view
    assert state[sg.MOVES] == 1
    tabu = sg.tabu_color(state)
    moves = env.legal_actions()
    colours = {int(a): int(env.board.ravel()[a]) for a in moves}
    sizes = group_sizes(env)
    assert tabu == 1 and sorted(sizes[a] for a in moves if colours[a] == tabu) == [2, 3]
    for after, expect in ((0, "tabu"), (2, "tabu"), (1, "late")):
        key = tabu + sgs.LATE * after
        kept = moves.copy()
        m = sgs.select_rule(state, kept, np.zeros(len(kept), dtype=np.int64), len(kept), key)
        allowed = [a for a in moves if colours[a] != tabu]
        if expect == "late":
            allowed += [a for a in moves if colours[a] == tabu and sizes[a] == 2]
        allowed = sorted(allowed) if allowed else list(moves)
        assert sorted(kept[:m].tolist()) == allowed
    for a in moves:
        assert sgs.is_pair(state, sg.padded_index(state, a)) == (sizes[a] == 2)
