"""NRPA: known optima, compiled and generic paths agreeing, budgets, seeds, pause and resume."""

import gymnasium as gym
import numpy as np
import pytest
from helpers import best_score, replayed_score, samegame

import mc_envs  # noqa: F401
from mc_envs import IllegalActionError
from mc_envs.agents import NRPA
from mc_envs.envs.samegame import SameGameEnv


@pytest.mark.parametrize("seed", range(5))
def test_finds_the_optimum_of_small_boards(seed):
    env = SameGameEnv(rows=5, cols=5, colors=3)
    env.reset(seed=seed)
    optimum = best_score(env)
    result = NRPA(level=2, iterations=30, seed=seed, policy="random").search(env, playouts=20_000)
    assert result.score == optimum
    assert replayed_score(env, result.actions) == result.score


@pytest.mark.parametrize("env_id", ["mc_envs/LeftMove-v0", "mc_envs/LeftmostPath-v0"])
def test_finds_the_best_leaf_of_the_abstract_problems(env_id):
    env = gym.make(env_id, depth=40).unwrapped
    env.reset()
    result = NRPA(level=2, seed=1).search(env, playouts=100_000)
    assert result.score == 40 and result.actions == [0] * 40
    assert result.stopped == "max_score" and result.playouts < 100_000


@pytest.mark.parametrize(
    "env_id, kwargs, level, policy, playouts",
    [
        ("mc_envs/SameGame-v0", {"position": 4}, 1, "tabu", 120),
        ("mc_envs/SameGame-v0", {"position": 4}, 2, "random", 150),
        ("mc_envs/LeftmostPath-v0", {"depth": 30}, 3, None, 400),
    ],
)
def test_compiled_and_generic_paths_agree(env_id, kwargs, level, policy, playouts):
    env = gym.make(env_id, **kwargs).unwrapped
    env.reset()
    fast, generic = (
        NRPA(level=level, iterations=10, seed=7, policy=policy, compiled=c).search(
            env, playouts=playouts
        )
        for c in (True, False)
    )
    assert (fast.score, fast.actions, fast.playouts, fast.iterations) == (
        generic.score,
        generic.actions,
        generic.playouts,
        generic.iterations,
    )
    assert replayed_score(env, fast.actions) == fast.score


@pytest.mark.parametrize(
    "env_id, kwargs, level, policy",
    [
        ("mc_envs/SameGame-v0", {"position": 3}, 2, "tabu"),
        ("mc_envs/SameGame-v0", {"position": 3}, 3, "random"),
        ("mc_envs/MorpionSolitaire5T-v0", {}, 2, None),
    ],
)
@pytest.mark.parametrize("compiled", [True, False])
def test_adapting_from_move_logs_equals_replaying_the_sequences(
    monkeypatch, env_id, kwargs, level, policy, compiled
):
    env = gym.make(env_id, **kwargs).unwrapped
    env.reset()
    playouts = 2000 if compiled else 150

    def search():
        return NRPA(level=level, iterations=8, seed=4, policy=policy, compiled=compiled).search(
            env, playouts=playouts
        )

    logged = search()
    monkeypatch.setattr(
        "mc_envs.agents.nested.nrpa.LOG_CAPACITY", 0
    )  # no room for a log: every step replayed
    replayed = search()
    assert (logged.score, logged.actions, logged.playouts) == (
        replayed.score,
        replayed.actions,
        replayed.playouts,
    )
    assert replayed_score(env, logged.actions) == logged.score


def test_seeded_runs_are_reproducible_and_seeds_differ():
    env = samegame(6)
    a, b, c = (NRPA(level=2, seed=s).search(env, playouts=1500) for s in (3, 3, 4))
    assert a.playouts == b.playouts == 1500 and a.stopped == "playouts"
    assert (a.score, a.actions) == (b.score, b.actions)
    assert a.actions != c.actions
    assert replayed_score(env, a.actions) == a.score


def test_one_complete_run_without_budget_does_n_to_the_level_playouts():
    env = samegame(2)
    result = NRPA(level=2, iterations=12, seed=0).search(env)
    assert result.stopped == "complete" and result.iterations == 1
    assert result.playouts == 12 * 12
    assert replayed_score(env, result.actions) == result.score


def test_an_iterations_budget_counts_complete_runs():
    env = samegame(3)
    result = NRPA(level=1, iterations=20, seed=0).search(env, iterations=3)
    assert result.iterations == 3 and result.playouts == 60 and result.stopped == "iterations"


def test_adaptation_beats_sampling():
    env = samegame(5)
    nrpa = NRPA(level=1, iterations=400, seed=1, policy="random").search(env)
    plain = NRPA(level=1, iterations=400, seed=1, policy="random", alpha=0.0).search(env)
    assert nrpa.score > plain.score


def test_tabu_policy_is_samegames_only():
    env = gym.make("mc_envs/LeftMove-v0", depth=5).unwrapped
    env.reset()
    with pytest.raises(ValueError, match="tabu"):
        NRPA(policy="tabu").search(env)


def test_pauses_for_checkpoints_change_nothing(tmp_path):
    env = samegame(7)
    plain = NRPA(level=2, iterations=20, seed=5).search(env, playouts=2500)
    saved = NRPA(level=2, iterations=20, seed=5).search(
        env, playouts=2500, checkpoint=tmp_path / "ck.json", checkpoint_every=0.01
    )
    assert (saved.score, saved.actions, saved.playouts) == (plain.score, plain.actions, 2500)
    assert (tmp_path / "ck.json").exists()


def test_resuming_a_checkpoint_continues_the_same_search(tmp_path):
    env = samegame(8)
    whole = NRPA(level=3, iterations=10, seed=2).search(env, playouts=700)
    path = tmp_path / "ck.json"
    NRPA(level=3, iterations=10, seed=2).search(env, playouts=333, checkpoint=path)
    resumed = NRPA(level=3, iterations=10, seed=2).search(
        env, playouts=700, checkpoint=path, resume=True
    )
    assert (resumed.score, resumed.actions, resumed.playouts) == (whole.score, whole.actions, 700)
    with pytest.raises(ValueError, match="seed"):
        NRPA(level=3, iterations=10, seed=3).search(env, checkpoint=path, resume=True)
    with pytest.raises(ValueError, match="position"):
        NRPA(level=3, iterations=10, seed=2).search(samegame(9), checkpoint=path, resume=True)


def test_search_leaves_the_env_as_it_was():
    env = samegame(5)
    env.step(env.legal_actions()[2])
    snap = env.clone_state()
    for compiled in (True, False):
        result = NRPA(level=1, iterations=5, seed=1, compiled=compiled).search(env, playouts=20)
        assert env.clone_state() == snap
        assert replayed_score(env, result.actions) == result.score
    assert np.isfinite(result.score)


def test_a_time_limit_alone_restarts_until_it_ends():
    import gymnasium as gym

    from mc_envs.agents import NRPA

    env = gym.make("mc_envs/LeftMove-v0", depth=6).unwrapped
    env.reset()
    result = NRPA(level=1, iterations=3, seed=0).search(env, time_limit=0.5)
    assert result.stopped in ("time", "max_score") and result.iterations >= 1
    env2 = gym.make("mc_envs/SameGame-v0", rows=5, cols=5, colors=4).unwrapped
    env2.reset(seed=1)
    timed = NRPA(level=1, iterations=5, seed=0).search(env2, time_limit=0.5)
    assert timed.stopped == "time" and timed.iterations > 1  # one run is 5 playouts


@pytest.mark.parametrize("env_id", ["mc_envs/SameGame-v0", "mc_envs/Go-v0"])
def test_a_search_move_is_the_steps_move_without_its_observation(env_id):
    # The generic path's play_move: the state a step leaves, for a legal action; an illegal one
    # raises and changes nothing.
    stepped, moved = gym.make(env_id).unwrapped, gym.make(env_id).unwrapped
    stepped.reset(seed=5)
    moved.reset(seed=5)
    rng = np.random.default_rng(5)
    for _ in range(40):
        legal = stepped.legal_actions()
        if len(legal) == 0:
            break
        a = int(rng.choice(legal))
        stepped.step(a)
        moved.play_move(a)
        assert moved.clone_state() == stepped.clone_state()
        assert moved.legal_actions().tolist() == stepped.legal_actions().tolist()
    illegal = int(np.flatnonzero(~moved.action_masks())[0])
    before = moved.clone_state()
    with pytest.raises(IllegalActionError):
        moved.play_move(illegal)
    assert moved.clone_state() == before


@pytest.mark.parametrize(
    "env_id", ["mc_envs/SameGame-v0", "mc_envs/WeakSchur-v0", "mc_envs/MorpionSolitaire5D-v0"]
)
def test_an_envs_legal_codes_are_its_legal_actions_and_their_move_codes(env_id):
    # The generic path's one call a state (SameGame: a kernel pass; WeakSchur: a code per move;
    # Morpion: the actions themselves).
    env = gym.make(env_id).unwrapped
    env.reset(seed=3)
    rng = np.random.default_rng(3)
    out, codes = (np.full(env.action_space.n, -1, np.int64) for _ in range(2))
    for _ in range(30):
        n = env.legal_codes(out, codes)
        legal = env.legal_actions()
        assert out[:n].tolist() == legal.tolist()
        assert codes[:n].tolist() == [env.move_code(int(a)) for a in legal]
        if n == 0:
            break
        env.step(int(rng.choice(legal)))
    fresh = gym.make(env_id).unwrapped
    fresh.reset(seed=3)
    n = fresh.legal_codes(out, codes)
    assert fresh._legal_cache is not None and fresh._legal_cache.tolist() == out[:n].tolist()
