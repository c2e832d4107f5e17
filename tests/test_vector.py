"""The compiled vector envs (mc_envs.vector): the same episodes as SyncVectorEnv for every id and
kwarg, batched clone/restore, bad input, and what cannot run compiled."""

from __future__ import annotations

import pickle
import threading

import gymnasium as gym
import numpy as np
import pytest

import mc_envs
from mc_envs import IllegalActionError, State
from mc_envs.registry import ENVS
from mc_envs.vector import PlanningVectorEnv, VectorState

SUDOKU = "53..7....6..195....98....6.8...6...34..8.3..17...2...6.6....28....419..5....8..79"
BOARD = "1122\n1212\n3312\n2231"

# Every id with its default kwargs, then every kwarg the single env takes.
CASES = [(env_id, {}) for env_id in ENVS] + [
    ("mc_envs/SameGame-v0", {"position": 1}),
    ("mc_envs/SameGame-v0", {"position": 7, "penalty": "jsgames"}),
    ("mc_envs/SameGame-v0", {"rows": 6, "cols": 5, "colors": 3, "penalty": "schadd"}),
    ("mc_envs/SameGame-v0", {"board": BOARD}),
    ("mc_envs/Sudoku-v0", {"puzzle": SUDOKU}),
    ("mc_envs/Sudoku-v0", {"size": 16}),
    ("mc_envs/Sudoku-v0", {"branching": "all", "empty_fraction": 0.3}),
    ("mc_envs/Sudoku-v0", {"empty_fraction": 1.0}),
    ("mc_envs/MorpionSolitaire5T-v0", {"size": 20}),
    ("mc_envs/TicTacToe-v0", {"opponent": "random"}),
    ("mc_envs/TicTacToe-v0", {"opponent": "random", "agent_player": 1}),
    ("mc_envs/ConnectFour-v0", {"opponent": "Random", "agent_player": 1}),
    ("mc_envs/ConnectFour-v0", {"opponent": "random", "illegal_action": "raise"}),
    ("mc_envs/LeftMove-v0", {"depth": 3}),
    ("mc_envs/LeftmostPath-v0", {"depth": 25}),
    ("mc_envs/WeakSchur-v0", {"k": 2}),
    ("mc_envs/WeakSchur-v0", {"k": 4}),
]


def assert_same_info(a: dict, b: dict, where: str) -> None:
    assert set(a) == set(b), (where, sorted(a), sorted(b))
    for key in a:
        x, y = np.asarray(a[key]), np.asarray(b[key])
        assert x.dtype == y.dtype and x.shape == y.shape, (where, key, x.dtype, y.dtype)
        assert (x == y).all(), (where, key, x, y)


def pick(mask: np.ndarray, rng: np.random.Generator, size: int, strict: bool) -> int:
    """A random legal action, or (5% of the time, not in strict mode) an illegal one if any."""
    legal = np.flatnonzero(mask)
    if strict or (len(legal) and rng.random() > 0.05):
        return int(rng.choice(legal)) if len(legal) else 0
    illegal = np.flatnonzero(~mask)
    return int(rng.choice(illegal)) if len(illegal) else int(rng.integers(size))


def run_side_by_side(env_id: str, kwargs: dict, *, n: int = 5, steps: int = 200, seed: int = 7):
    """Steps SyncVectorEnv and ours with the same seed and actions; asserts every output equal."""
    sync = gym.make_vec(env_id, num_envs=n, vectorization_mode="sync", **kwargs)
    ours = gym.make_vec(env_id, num_envs=n, vectorization_mode="vector_entry_point", **kwargs)
    assert isinstance(ours, PlanningVectorEnv)
    assert ours.single_observation_space == sync.single_observation_space
    assert ours.single_action_space == sync.single_action_space
    assert ours.observation_space == sync.observation_space
    assert ours.metadata["autoreset_mode"] == sync.metadata["autoreset_mode"]
    (o1, i1), (o2, i2) = sync.reset(seed=seed), ours.reset(seed=seed)
    assert o1.dtype == o2.dtype and np.array_equal(o1, o2)
    assert_same_info(i1, i2, "reset")
    rng = np.random.default_rng(seed)
    size = sync.single_action_space.n
    strict = kwargs.get("illegal_action") == "raise"
    ends = illegal = 0
    for t in range(steps):
        masks = np.stack(sync.call("action_masks"))  # exact: all False where a game is over
        assert np.array_equal(masks, ours.action_masks())
        acts = np.array([pick(m, rng, size, strict) for m in masks])
        out1, out2 = sync.step(acts), ours.step(acts)
        for k in range(4):
            assert out1[k].dtype == out2[k].dtype, (t, k)
            assert np.array_equal(out1[k], out2[k]), (t, k, out1[k], out2[k])
        assert_same_info(out1[4], out2[4], f"step {t}")
        i1 = out1[4]
        ends += int(out1[2].sum())
        illegal += int(np.sum(out1[4].get("illegal_action", 0)))
    sync.close()
    ours.close()
    return ends, illegal


@pytest.mark.parametrize(("env_id", "kwargs"), CASES, ids=lambda c: str(c))
def test_same_episodes_as_sync_vector_env(env_id: str, kwargs: dict) -> None:
    steps = 60 if "Morpion" in env_id or kwargs.get("size") == 16 else 200
    ends, illegal = run_side_by_side(env_id, kwargs, steps=steps)
    assert ends > 0  # autoresets were compared too
    if kwargs.get("illegal_action") != "raise" and "Left" not in env_id:
        assert illegal > 0  # and illegal actions with their infos (the trees have none)


@pytest.mark.parametrize(
    ("env_id", "kwargs"),
    [("mc_envs/SameGame-v0", {}), ("mc_envs/Sudoku-v0", {}), ("mc_envs/Sudoku-v0", {"size": 16})],
)
def test_batched_starts_are_the_single_envs_starts(env_id: str, kwargs: dict) -> None:
    # Many sub-envs reset in one step: their starts are made in one call (the Sudoku grids on
    # every core from 8); each is the start the single env draws from the same generator.
    proto = gym.make(env_id, **kwargs).unwrapped
    seeds = range(100, 112)
    generators = [np.random.default_rng(s) for s in seeds]
    batch = proto._new_states(generators, None, parallel=True)
    for row, s in zip(batch, seeds, strict=True):
        proto._np_random = np.random.default_rng(s)
        assert np.array_equal(row, proto._new_state(None, None))
    assert len({row.tobytes() for row in batch}) == len(batch)
    ends, _ = run_side_by_side(env_id, kwargs, n=12, steps=40 if kwargs else 120)
    assert ends >= 12  # several steps restarted many sub-envs at once


def test_parallel_and_serial_steps_agree() -> None:
    n = 300
    kw = {"opponent": "random"}
    par = gym.make_vec("mc_envs/ConnectFour-v0", num_envs=n, threads=2, **kw)
    ser = gym.make_vec("mc_envs/ConnectFour-v0", num_envs=n, threads=1, **kw)
    auto = gym.make_vec("mc_envs/ConnectFour-v0", num_envs=n, **kw)  # times both, keeps one
    assert par.parallel or mc_envs._numba.numba.config.NUMBA_NUM_THREADS == 1
    assert ser.parallel is False
    auto.reset(seed=1)
    (o1, i1), (o2, _) = par.reset(seed=1), ser.reset(seed=1)
    assert np.array_equal(o1, o2)
    rng = np.random.default_rng(0)
    for k in range(200):
        if k == 100:  # its parallel steps compile in the background: ready, they are timed
            assert auto.unwrapped._run.wait(timeout=600)
        acts = (rng.random(i1["action_mask"].shape) * i1["action_mask"]).argmax(1)
        a, b, c = par.step(acts), ser.step(acts), auto.step(acts)
        for x, y, z in zip(a[:4], b[:4], c[:4], strict=True):
            assert np.array_equal(x, y) and np.array_equal(x, z)
        i1 = a[4]
    assert auto.parallel is not None  # decided after its first steps


def test_the_automatic_choice_is_tried_again_and_follows_the_faster_kind(monkeypatch) -> None:
    from mc_envs.games.connect_four import KERNEL
    from mc_envs.vector import threads
    from mc_envs.vector.compiled import RESET, STEP

    monkeypatch.setattr(threads.numba.config, "NUMBA_NUM_THREADS", 2)
    runner = threads.Runner(KERNEL, threads.TUNE_MIN, None)
    kinds: list[bool] = []
    cost = {False: 2.0, True: 1.0}  # seconds a step of each kind takes on the fake clock
    clock = [0.0]

    def now() -> float:
        clock[0] += cost[kinds[-1]] if kinds else 0.0
        return clock[0]

    compiled = threading.Event()

    class Compiling:  # the parallel entry point's compilation, done when the test says so
        error = None
        done = property(lambda self: compiled.is_set())

        @classmethod
        def start(cls, *args):
            return cls()

    monkeypatch.setattr(threads, "Compiling", Compiling)
    monkeypatch.setattr(threads.time, "perf_counter", now)
    monkeypatch.setattr(runner, "_serial", lambda *args: kinds.append(False))
    monkeypatch.setattr(runner, "_parallel", lambda *args: kinds.append(True))
    assert runner.parallel is None
    for _ in range(5):  # serial steps while the parallel entry point compiles; no trial
        runner(STEP, None, None, (), (), ())
    assert kinds == [False] * 5 and runner.parallel is None
    compiled.set()
    kinds.clear()
    for _ in range(2 * threads.RUN):
        runner(STEP, None, None, (), (), ())
    assert runner.parallel is None and kinds == [False] * threads.RUN + [True] * threads.RUN
    runner(STEP, None, None, (), (), ())
    assert runner.parallel is True and kinds[-1] is True
    cost.update({False: 1.0, True: 3.0})  # the second core stops paying
    for _ in range(threads.WATCH - 1):
        runner(STEP, None, None, (), (), ())
    assert kinds[-threads.WATCH :] == [True] * threads.WATCH and runner.parallel is True
    for _ in range(2 * threads.RUN + 1):
        runner(STEP, None, None, (), (), ())
    assert runner.parallel is False and kinds[-1] is False
    start = len(kinds) - 1  # the step the trial chose at: the first of the kept kind
    watch, run = threads.WATCH, threads.RUN
    for _ in range(3 * watch + 4 * run):
        runner(STEP, None, None, (), (), ())
    trials = [i - run for i, kind in enumerate(kinds[start:]) if kind][::run]  # where they began
    assert trials == [watch, watch + 2 * run + 2 * watch]  # a trial that kept it: twice as long
    assert runner.parallel is False and not any(kinds[start + trials[1] + 2 * run :])
    runner(RESET, None, None, (), (), ())  # not a step: the kept kind, no trial
    assert kinds[-1] is False and runner.parallel is False


def test_no_step_compiles_once_the_first_has_returned() -> None:
    """The automatic choice compiles its parallel entry point on another thread: every entry
    point a later step calls is compiled when it is called (here: Connect Four at N = 64)."""
    env = gym.make_vec("mc_envs/ConnectFour-v0", num_envs=64)
    run = env.unwrapped._run
    obs, info = env.reset(seed=0)
    env.step(info["action_mask"].argmax(1))
    assert run.wait(timeout=600)
    entries = {False: run._serial, True: run._parallel}
    counts = {k: len(e.signatures) for k, e in entries.items()}
    assert counts == {False: 1, True: 1}  # one specialization each
    again = gym.make_vec("mc_envs/ConnectFour-v0", num_envs=64).unwrapped
    again.reset(seed=1)
    assert again._run.compiling is run.compiling  # one compilation for every env of the game
    rng = np.random.default_rng(0)
    while run.parallel is None:
        obs, _, _, _, info = env.step((rng.random((64, 7)) * info["action_mask"]).argmax(1))
    assert {k: len(e.signatures) for k, e in entries.items()} == counts


def test_reset_seeds_options_and_mask_as_sync() -> None:
    env_id, n = "mc_envs/SameGame-v0", 4
    kw = {"rows": 5, "cols": 5, "colors": 3}
    sync = gym.make_vec(env_id, num_envs=n, vectorization_mode="sync", **kw)
    ours = gym.make_vec(env_id, num_envs=n, **kw)
    o1, _ = sync.reset(seed=[3, None, 5, 9])
    o2, _ = ours.reset(seed=[3, None, 5, 9])
    assert np.array_equal(o1[[0, 2, 3]], o2[[0, 2, 3]])  # seeded; sub-env 1 drew its own seed
    sync.reset()
    ours.reset()  # seed=None: every generator goes on
    assert np.array_equal(sync.reset()[0][[0, 2, 3]], ours.reset()[0][[0, 2, 3]])
    mask = np.array([True, False, True, False])
    o1, i1 = sync.reset(seed=[1, 2, 3, 4], options={"reset_mask": mask.copy()})
    o2, i2 = ours.reset(seed=[1, 2, 3, 4], options={"reset_mask": mask.copy()})
    assert np.array_equal(o2[mask], np.asarray(o1)[mask])
    sudoku = gym.make_vec("mc_envs/Sudoku-v0", num_envs=2)
    obs, _ = sudoku.reset(seed=0, options={"puzzle": SUDOKU})
    single, _ = gym.make("mc_envs/Sudoku-v0").reset(options={"puzzle": SUDOKU})
    assert np.array_equal(obs[0], single) and np.array_equal(obs[1], single)


def random_steps(env: PlanningVectorEnv, rng: np.random.Generator, steps: int) -> list:
    """Steps with random legal actions; returns every output and the env's own masks."""
    out = []
    for _ in range(steps):
        m = env.action_masks()
        acts = (rng.random(m.shape) * m).argmax(1)
        obs, r, term, trunc, info = env.step(acts)
        out.append((acts, obs, r, term, info["action_mask"], env.action_masks()))
    return out


@pytest.mark.parametrize(
    "env_id, kwargs",
    [
        ("mc_envs/ConnectFour-v0", {}),
        ("mc_envs/ConnectFour-v0", {"opponent": "random"}),
        ("mc_envs/MorpionSolitaire5T-v0", {"size": 12}),
    ],
)
def test_clone_restore_replays_every_step_exactly(env_id: str, kwargs: dict) -> None:
    """ALE's test: restore, replay the same actions, compare every step. A snapshot holds the
    random opponent's generators, not each sub-env's np_random (as the single env's State): with
    an opponent, a sub-env is compared until its episode ends (the next start is a new draw)."""
    env = gym.make_vec(env_id, num_envs=16, **kwargs)
    env.reset(seed=3)
    random_steps(env, np.random.default_rng(1), 7)
    snap = env.clone_state()
    most = env.action_masks().sum(1).max()
    first = random_steps(env, np.random.default_rng(2), 40)
    if "Morpion" in env_id:  # the legal lists grew past their widest row at the snapshot
        assert max(legal.sum(1).max() for *_, legal in first) > most
    env.restore_state(snap)
    assert env.clone_state() == snap
    live = ~snap.autoreset if "opponent" in kwargs else np.ones(16, bool)
    for acts, obs, r, term, masks, legal in first:
        o, r2, t2, _, info = env.step(acts)
        assert np.array_equal(o[live], obs[live]) and np.array_equal(r[live], r2[live])
        assert np.array_equal(t2[live], term[live])
        assert np.array_equal(info["action_mask"][live], masks[live])
        assert np.array_equal(env.action_masks()[live], legal[live])  # the env's own masks too
        if "opponent" in kwargs:
            live &= ~term
    assert live.sum() < 16 or "opponent" not in kwargs  # some episodes ended within the replay


def test_snapshot_is_immutable_picklable_and_checked_when_untrusted() -> None:
    env = gym.make_vec("mc_envs/SameGame-v0", num_envs=3, rows=5, cols=5, colors=3)
    env.reset(seed=0)
    random_steps(env, np.random.default_rng(0), 3)
    snap = env.clone_state()
    with pytest.raises(ValueError):
        snap.data[0, 0] = 1
    copy = pickle.loads(pickle.dumps(snap))
    assert copy == snap and not hasattr(copy, "_derived")
    expected_obs, expected_masks = env.observation(), env.action_masks()
    random_steps(env, np.random.default_rng(1), 3)
    env.restore_state(copy)  # checked, then recomputed
    assert np.array_equal(env.observation(), expected_obs)
    assert np.array_equal(env.action_masks(), expected_masks)
    bad = pickle.loads(pickle.dumps(snap))
    data = bad.data.copy()
    data[1, 0] = -5  # sub-env 1's score
    forged = VectorState(bad.game, bad.config, data, bad.autoreset, bad.opponent_rng)
    before = env.clone_state()
    with pytest.raises(ValueError, match="sub-env 1"):
        env.restore_state(forged)
    assert env.clone_state() == before


def test_restore_from_single_env_states_and_refusals() -> None:
    singles = [gym.make("mc_envs/TicTacToe-v0").unwrapped for _ in range(3)]
    for k, e in enumerate(singles):
        e.reset(seed=k)
        for a in e.legal_actions()[: k + 1]:
            e.step(int(a))
    env = gym.make_vec("mc_envs/TicTacToe-v0", num_envs=3)
    env.reset(seed=0)
    env.restore_state([e.clone_state() for e in singles])
    for k, e in enumerate(singles):
        assert np.array_equal(env.observation()[k], e.observation())
        assert np.array_equal(env.action_masks()[k], e.action_masks())
        assert env.clone_state()[k] == e.clone_state()
    c4 = gym.make("mc_envs/ConnectFour-v0").unwrapped
    with pytest.raises(ValueError, match="states\\[1\\] is a ConnectFour"):
        env.restore_state([singles[0].clone_state(), c4.clone_state(), singles[2].clone_state()])
    with pytest.raises(ValueError, match="2 states for 3"):
        env.restore_state([s.clone_state() for s in singles[:2]])
    with pytest.raises(TypeError):
        env.restore_state(42)
    other = gym.make_vec("mc_envs/TicTacToe-v0", num_envs=2)
    other.reset(seed=0)
    with pytest.raises(ValueError):
        env.restore_state(other.clone_state())
    forged = State("TicTacToe", (), np.array([511, 0, 0, 9, 0, 0], dtype=np.int64))
    with pytest.raises(ValueError, match="sub-env 2"):
        env.restore_state([singles[0].clone_state(), singles[1].clone_state(), forged])


@pytest.mark.parametrize(
    ("actions", "match"),
    [
        (np.zeros(3, np.int64), "one per sub-env"),
        (np.array([[0, 1, 2, 3]]), "one per sub-env"),
        (np.array([0, 1, 9, 2]), "sub-env 2: outside the action space 0..6"),
        (np.array([0, -1, 0, 0]), "sub-env 1: outside"),
        (np.array([0.0, 1.5, 0.0, 0.0]), "sub-env 1: not an integer"),
        (np.array([0.0, np.nan, 0.0, 0.0]), "sub-env 1: not an integer"),
        (np.array(["a", "b", "c", "d"]), "dtype <U1"),
        (np.array([0, None, 1, 2], dtype=object), "dtype object"),
    ],
)
def test_bad_actions_are_refused_naming_the_sub_env(actions, match) -> None:
    env = gym.make_vec("mc_envs/ConnectFour-v0", num_envs=4)
    env.reset(seed=0)
    before = env.clone_state()
    with pytest.raises(IllegalActionError, match=match):
        env.step(actions)
    assert env.clone_state() == before
    obs, *_ = env.step(np.array([0.0, 1.0, 2.0, 3.0]))  # whole floats are accepted, as singly
    assert obs[3, 1, 5, 3] == 1  # sub-env 3: player 0's stone, now the opponent's, bottom of col 3


def test_resetting_sub_envs_ignore_their_action() -> None:
    env = gym.make_vec("mc_envs/TicTacToe-v0", num_envs=2)
    env.reset(seed=0)
    _, _, term, _, info = env.step(np.array([0, 0]))
    _, _, term, _, info = env.step(np.array([0, 1]))  # sub-env 0: illegal, the episode ends
    assert term.tolist() == [True, False] and info["_illegal_action"].tolist() == [True, False]
    assert info["reason"][0] == "cell (row 0, col 0) is taken" or info["reason"][0]
    obs, r, term, _, _ = env.step(np.array([99, 2]))  # 99 is ignored: sub-env 0 resets
    assert r[0] == 0 and not term[0] and not obs[0].any()


def test_strict_mode_raises_naming_the_sub_env_and_steps_nothing() -> None:
    env = gym.make_vec("mc_envs/ConnectFour-v0", num_envs=3, illegal_action="raise")
    env.reset(seed=0)
    for _ in range(6):
        env.step(np.array([0, 1, 2]))
    before = env.clone_state()
    with pytest.raises(IllegalActionError, match=r"column 1 is full \(sub-env 1\)"):
        env.step(np.array([2, 1, 0]))
    assert env.clone_state() == before
    env.illegal_action = "terminate"
    _, r, term, _, info = env.step(np.array([2, 1, 0]))
    assert term.tolist() == [False, True, False] and r[1] == -1 and info["illegal_action"][1]
    with pytest.raises(ValueError, match="illegal_action must be one of"):
        env.illegal_action = "ignore"


@pytest.mark.parametrize("opponent", ["uct", "puct-easy", lambda env: 0])
def test_opponents_that_cannot_run_compiled_are_refused(opponent) -> None:
    with pytest.raises(ValueError, match="vectorization_mode='sync'"):
        gym.make_vec("mc_envs/ConnectFour-v0", num_envs=2, opponent=opponent)


def test_bad_construction_and_step_before_reset() -> None:
    with pytest.raises(ValueError, match="num_envs"):
        gym.make_vec("mc_envs/TicTacToe-v0", num_envs=0, vectorization_mode="vector_entry_point")
    with pytest.raises(ValueError, match="threads"):
        gym.make_vec("mc_envs/TicTacToe-v0", num_envs=2, threads=0)
    with pytest.raises(ValueError, match="position must be"):
        gym.make_vec("mc_envs/SameGame-v0", num_envs=2, position=21)
    env = gym.make_vec("mc_envs/TicTacToe-v0", num_envs=2)
    with pytest.raises(RuntimeError, match="reset"):
        env.step(np.array([0, 0]))


def test_make_vec_defaults_to_the_compiled_env_and_copies_outputs() -> None:
    env = gym.make_vec("mc_envs/LeftMove-v0", num_envs=2, depth=4)
    assert isinstance(env, PlanningVectorEnv)
    obs, info = env.reset(seed=0)
    obs[:] = 7
    info["action_mask"][:] = False
    assert env.observation().max() == 0 and env.action_masks().all()
    fast = gym.make_vec("mc_envs/LeftMove-v0", num_envs=2, depth=4, copy=False)
    obs, _ = fast.reset(seed=0)
    fast.step(np.array([0, 1]))
    assert obs.tolist() == [[1, 1], [1, 0]]  # the buffer itself: the step wrote into it


def test_returned_arrays_are_never_written_again_and_released_ones_are_reused() -> None:
    env = gym.make_vec("mc_envs/ConnectFour-v0", num_envs=3)
    obs, info = env.reset(seed=0)
    held = [(obs, info["action_mask"])]
    for t in range(12):
        obs, _, _, _, info = env.step(np.array([t % 7, (t + 1) % 7, 3]))
        held.append((obs, info["action_mask"]))
    frozen = [(o.copy(), m.copy()) for o, m in held]
    for _ in range(6):
        env.step(np.array([0, 1, 2]))
    for (o, m), (o0, m0) in zip(held, frozen, strict=True):
        assert np.array_equal(o, o0) and np.array_equal(m, m0)  # no later step wrote into them
    # The first masks made are kept for reuse; one is still held, one through a view.
    free = {id(held[0][1]), id(held[3][1])}
    keep, view, kept = held[1][1], held[2][1][1:], held[1][1].copy()
    del held, frozen, obs, info, o, m, o0, m0
    seen = {id(env.step(np.array([0, 1, 2]))[4]["action_mask"]) for _ in range(4)}
    assert seen and seen <= free  # only arrays nothing refers to any more are written again
    assert np.array_equal(keep, kept) and view.base is not None


@pytest.mark.parametrize("env_id", sorted(ENVS))
def test_corrupted_snapshots_are_refused_or_play_on_without_crashing(env_id: str) -> None:
    """A fuzz of restore_state: forged rows (random fields set to random values) are refused with
    a ValueError naming the sub-env, or are valid states that step on (compiled code never sees
    an unchecked state)."""
    kwargs = {"size": 12} if "Morpion" in env_id else {}
    env = gym.make_vec(env_id, num_envs=4, **kwargs)
    env.reset(seed=0)
    random_steps(env, np.random.default_rng(0), 3)
    good = pickle.loads(pickle.dumps(env.clone_state()))
    rng = np.random.default_rng(1)
    refused = 0
    for _ in range(40):
        data = good.data.copy()
        row = rng.integers(4)
        for field in rng.integers(data.shape[1], size=rng.integers(1, 4)):
            data[row, field] = rng.choice([-1, 0, 1, 2, 7, 99, 2**20, -(2**20)])
        forged = VectorState(good.game, good.config, data, good.autoreset, good.opponent_rng)
        try:
            env.restore_state(forged)
        except ValueError as error:
            assert f"sub-env {row}" in str(error)
            refused += 1
            continue
        random_steps(env, rng, 5)
    assert refused > 0


def test_partial_resets_draw_the_opponent_seeds_of_single_resets() -> None:
    """A reset of some sub-envs (options["reset_mask"]) takes the next opponent seed of each, as
    the single env's reset does: the episodes after it are still SyncVectorEnv's."""
    kw = {"opponent": "random"}
    sync = gym.make_vec("mc_envs/TicTacToe-v0", num_envs=3, vectorization_mode="sync", **kw)
    ours = gym.make_vec("mc_envs/TicTacToe-v0", num_envs=3, **kw)
    sync.reset(seed=5)
    ours.reset(seed=5)
    rng = np.random.default_rng(0)
    for k in range(60):
        mask = np.array([k % 2 == 0, True, k % 3 == 0])
        o1, i1 = sync.reset(options={"reset_mask": mask.copy()})
        o2, i2 = ours.reset(options={"reset_mask": mask.copy()})
        assert np.array_equal(np.asarray(o1)[mask], o2[mask])
        acts = (rng.random((3, 9)) * ours.action_masks()).argmax(1)
        a, b = sync.step(acts), ours.step(acts)
        for x, y in zip(a[:4], b[:4], strict=True):
            assert np.array_equal(x, y)


def test_render_gives_each_sub_env_frame_as_sync() -> None:
    kw = {"render_mode": "ansi", "rows": 4, "cols": 4, "colors": 2}
    sync = gym.make_vec("mc_envs/SameGame-v0", num_envs=3, vectorization_mode="sync", **kw)
    ours = gym.make_vec("mc_envs/SameGame-v0", num_envs=3, **kw)
    sync.reset(seed=2)
    _, info = ours.reset(seed=2)
    acts = info["action_mask"].argmax(1)
    sync.step(acts)
    ours.step(acts)
    assert ours.render() == sync.render() and len(ours.render()) == 3
    assert gym.make_vec("mc_envs/SameGame-v0", num_envs=2).render() is None
