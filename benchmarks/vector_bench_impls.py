"""The measurements of ``vector_bench.py``, each run alone in a fresh process (``--one``).

A throughput measurement steps one implementation of one id with N sub-envs (or games) for a fixed
wall time after a warmup, with random legal actions for the whole batch drawn by one vectorized
call per batch step, inside the timed loop. A PPO measurement trains sb3-contrib's MaskablePPO on
Connect Four against the random player. Every measurement reports the process's peak memory.
"""

from __future__ import annotations

import resource
import time
from typing import Any

import numpy as np

NUMPY_IMPLS = {"ours": "vector_entry_point", "sync": "sync", "async": "async"}
PGX_NAMES = {"mc_envs/ConnectFour-v0": "connect_four", "mc_envs/TicTacToe-v0": "tic_tac_toe"}
SMALL = 64  # actions up to which Draw uses one float per action
CODED = 9  # actions up to which Draw reads each mask row as one integer (tables of 2**CODED rows)
CODED_FROM = 256  # sub-envs from which that pays (7 actions: 8.7 us against 11.4 at 256)
PACKED_A, PACKED_CELLS = 512, 1 << 18  # masks from which listing from bits pays (_listed)
WARMUP = 0.5  # seconds of warmup after the first (compiling) batch step, at most


class Draw:
    """Random legal actions for a batch in one vectorized pass (the same for ours, sync and
    async): uniform over each sub-env's legal actions.

    The legal actions of the whole batch are listed by one ``np.flatnonzero`` over the ``[N, A]``
    masks, or for large sparse masks from the masks packed to bits (:func:`_listed`, the same
    list, from :data:`PACKED_A` actions and :data:`PACKED_CELLS` mask bytes); row-major, so each
    sub-env's are contiguous and counted by ``np.bincount``; and one uniform draw per sub-env
    picks among its own. One pass over the mask bytes: a uniform float
    per (sub-env, action) and an argmax per row (this benchmark's first draw) cost 1.6 us per
    sub-env at Sudoku's 729 actions against 0.14 us for this one, most of what was measured.
    Up to :data:`SMALL` actions that float-and-argmax draw is the cheaper of the two (fewer numpy
    calls), and is used. Up to :data:`CODED` actions (Connect Four, Tic-Tac-Toe, the trees) and
    from :data:`CODED_FROM` sub-envs, each row is read as one integer (a matrix product with the
    powers of two), and two tables indexed by it give the number of legal actions and the k-th
    of them, k drawn from one uniform per sub-env: 18 us a batch step at N = 1,024 and 7 actions,
    against 38 us for float-and-argmax (but 6.3 us against 2.3 at N = 1, hence the threshold).
    A sub-env with no legal action (its episode has ended: the next step resets it and ignores
    the action) gets action 0.
    """

    def __init__(self, seed: int = 0) -> None:
        self.rng = np.random.default_rng(seed)
        self._tables: dict[int, tuple[np.ndarray, np.ndarray, np.ndarray]] = {}

    def _coded(self, a: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """For ``a`` actions: the powers of two, each row code's count of legal actions, and its
        legal actions in order (row ``code`` of an ``[2**a, a]`` table, flattened)."""
        if a not in self._tables:
            codes = np.arange(1 << a)
            bits = (codes[:, None] >> np.arange(a)) & 1
            kth = np.zeros((1 << a, a), np.int64)
            for code in codes:
                legal = np.flatnonzero(bits[code])
                kth[code, : legal.size] = legal
            powers = (1 << np.arange(a)).astype(np.uint16)
            self._tables[a] = powers, bits.sum(1), kth.ravel()
        return self._tables[a]

    def __call__(self, mask: np.ndarray) -> np.ndarray:
        n, a = mask.shape
        if a <= CODED and n >= CODED_FROM:
            powers, count, kth = self._coded(a)
            code = mask.view(np.uint8) @ powers
            # numpy's uniforms are below 1 by a multiple of 2**-53, so k < count: no clipping
            k = (self.rng.random(n) * count[code]).astype(np.intp)
            row = code.astype(np.intp)
            row *= a
            row += k
            return kth[row]
        if a <= SMALL:  # few actions: a uniform float per action, zero where illegal, argmax
            u = self.rng.random((n, a), dtype=np.float32)
            u *= mask
            return u.argmax(1)
        packed = a >= PACKED_A and n * a >= PACKED_CELLS
        if packed:
            row, listed = _listed(mask)
        else:
            listed = np.flatnonzero(mask)  # flat indices: the action is taken modulo a below
            row = listed // a
        if row.size == 0:
            return np.zeros(n, np.int64)
        counts = np.bincount(row, minlength=n)
        first = np.cumsum(counts) - counts
        pick = first + (self.rng.random(n) * counts).astype(np.int64)
        chosen = listed[np.minimum(pick, len(listed) - 1)]
        return np.where(counts > 0, chosen if packed else chosen % a, 0)


def _listed(mask: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Every legal (sub-env, action) of ``mask``, row-major, as ``np.flatnonzero(mask)`` lists
    them: the mask packed to bits (one pass over its bytes), then only the 64-action words with a
    legal action unpacked. Morpion's masks (20,480 actions, a few dozen legal) at N = 1,024: 1.2 ms
    against 2.2 ms for ``np.flatnonzero`` over the bytes."""
    n = mask.shape[0]
    packed = np.packbits(mask, axis=1, bitorder="little")
    if packed.shape[1] % 8:
        padded = np.zeros((n, -(-packed.shape[1] // 8) * 8), np.uint8)
        padded[:, : packed.shape[1]] = packed
        packed = padded
    words = packed.view(np.uint64)
    per_row = words.shape[1]
    nz = np.flatnonzero(words != 0)
    bits = np.unpackbits(words.ravel()[nz].view(np.uint8), bitorder="little").view(np.bool_)
    pos = np.flatnonzero(bits)
    word = nz[pos >> 6]
    return word // per_row, (word % per_row) * 64 + (pos & 63)


def peak_rss_kb(who: int = resource.RUSAGE_SELF) -> int:
    """``getrusage(who).ru_maxrss``: the peak resident set in kB (Linux; for ``RUSAGE_CHILDREN``,
    that of the largest waited-for child)."""
    return int(resource.getrusage(who).ru_maxrss)


def rss_now_kb() -> int | None:
    """The current resident set in kB (``/proc/self/statm``; None where there is none)."""
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * resource.getpagesize() // 1024
    except OSError:
        return None


def _timed(step: Any, seconds: float, n: int, ready: Any = None) -> dict:
    """Warms ``step`` up (the first call compiles), then calls it for ``seconds`` of wall time.

    ``step()`` does one batch step and returns the seconds spent in the env step alone (or None).
    ``ready()``, if given, must also be true before the timing starts (ours: the serial or
    parallel step has been chosen, :attr:`mc_envs.vector.PlanningVectorEnv.parallel`).
    """
    start = time.perf_counter()
    step()
    first = time.perf_counter() - start
    warm = time.perf_counter()
    while time.perf_counter() - warm < min(WARMUP, seconds / 4) or (ready and not ready()):
        step()
    batches, env_seconds, start = 0, 0.0, time.perf_counter()
    while True:
        spent = step()
        batches += 1
        env_seconds += spent or 0.0
        elapsed = time.perf_counter() - start
        if elapsed >= seconds:
            break
    out = {
        "rss_end_kb": rss_now_kb(),
        "steps_per_s": batches * n / elapsed,
        "batch_steps": batches,
        "steps": batches * n,
        "seconds": round(elapsed, 4),
        "first_step_s": round(first, 3),
    }
    if env_seconds > 0:
        out["env_step_only_steps_per_s"] = batches * n / env_seconds
    return out


def measure_numpy(impl: str, env_id: str, n: int, seconds: float, seed: int = 0) -> dict:
    """steps/s of ``gym.make_vec(env_id, num_envs=n, vectorization_mode=...)`` for ``impl`` in
    ours (the compiled vector env, default ``threads`` and ``copy``), sync or async.

    Returns:
        The timing (:func:`_timed`), ``env_step_only_steps_per_s`` (the steps over the time spent
        in ``step`` alone, the draw left out), and the set-up time (``make_s``).
    """
    import gymnasium as gym

    import mc_envs  # noqa: F401  (registers the ids)

    start = time.perf_counter()
    env = gym.make_vec(env_id, num_envs=n, vectorization_mode=NUMPY_IMPLS[impl])
    _obs, info = env.reset(seed=seed)
    made = time.perf_counter() - start
    draw = Draw(seed)
    masks = [info["action_mask"]]

    def step() -> float:
        actions = draw(masks[0])
        t = time.perf_counter()
        _obs, _r, _term, _trunc, info = env.step(actions)
        spent = time.perf_counter() - t
        masks[0] = info["action_mask"]
        return spent

    try:
        ready = (lambda: env.unwrapped.parallel is not None) if impl == "ours" else None
        out = _timed(step, seconds, n, ready)
    finally:
        env.close()
    out["make_s"] = round(made, 3)
    if impl == "ours":
        out["parallel"] = env.unwrapped.parallel
    return out


def measure_pgx(env_id: str, n: int, seconds: float, seed: int = 0) -> dict:
    """steps/s of pgx on this CPU: ``jax.vmap`` over ``n`` games, one jitted batch step that draws
    a random legal action per game (``jax.random.categorical`` over the log of
    ``legal_action_mask``), steps them and resets the finished ones
    (``pgx.experimental.auto_reset``); ``block_until_ready`` after every batch step."""
    import jax
    import jax.numpy as jnp
    import pgx
    from pgx.experimental import auto_reset

    start = time.perf_counter()
    env = pgx.make(PGX_NAMES[env_id])
    step_one = jax.vmap(auto_reset(env.step, env.init))  # (state, action, key): v2's signature

    @jax.jit
    def batch_step(state: Any, key: Any) -> tuple[Any, Any]:
        key, k_act, k_step = jax.random.split(key, 3)
        logits = jnp.log(state.legal_action_mask.astype(jnp.float32))
        action = jax.random.categorical(k_act, logits, axis=-1)
        return step_one(state, action, jax.random.split(k_step, n)), key

    key, k_init = jax.random.split(jax.random.PRNGKey(seed))
    carry = [jax.jit(jax.vmap(env.init))(jax.random.split(k_init, n)), key]
    jax.block_until_ready(carry)
    made = time.perf_counter() - start

    def step() -> None:
        carry[0], carry[1] = batch_step(carry[0], carry[1])
        jax.block_until_ready(carry[0])

    out = _timed(step, seconds, n)
    out["make_s"] = round(made, 3)
    out["jax_backend"] = jax.default_backend()
    return out


def run_ppo(kind: str, env_id: str, steps: int, n_envs: int, seed: int, hyper: dict) -> dict:
    """Trains MaskablePPO (``MlpPolicy``, CPU, one torch thread) for ``steps`` steps on ``env_id``
    with ``opponent="random"``, over ``kind``: ``"ours"`` (:class:`mc_envs.vector.SB3VecEnv` over
    the compiled vector env) or ``"dummy"`` (SB3's ``DummyVecEnv`` over ``gym.make`` envs, masks
    from each env's ``action_masks()`` through ``env_method``); both under ``VecMonitor``.

    Returns:
        The wall time of ``learn`` (``learn_s``), of building the envs and model (``setup_s``),
        steps/s, and the mean reward and length of the last (up to 100) episodes.
    """
    from functools import partial

    import gymnasium as gym
    import torch
    from sb3_contrib import MaskablePPO
    from stable_baselines3.common.vec_env import DummyVecEnv, VecMonitor

    import mc_envs  # noqa: F401  (registers the ids)

    torch.set_num_threads(1)
    start = time.perf_counter()
    if kind == "ours":
        from mc_envs.vector import SB3VecEnv

        vector = gym.make_vec(
            env_id, num_envs=n_envs, vectorization_mode="vector_entry_point", opponent="random"
        )
        venv = SB3VecEnv(vector)
    else:
        venv = DummyVecEnv([partial(gym.make, env_id, opponent="random")] * n_envs)
    venv = VecMonitor(venv)
    model = MaskablePPO("MlpPolicy", venv, seed=seed, device="cpu", verbose=0, **hyper)
    setup = time.perf_counter() - start
    start = time.perf_counter()
    model.learn(total_timesteps=steps)
    learn = time.perf_counter() - start
    episodes = list(model.ep_info_buffer)
    venv.close()
    return {
        "learn_s": round(learn, 3),
        "setup_s": round(setup, 3),
        "steps_done": int(model.num_timesteps),
        "steps_per_s": model.num_timesteps / learn,
        "episodes_averaged": len(episodes),
        "mean_episode_reward": float(np.mean([e["r"] for e in episodes])) if episodes else None,
        "mean_episode_length": float(np.mean([e["l"] for e in episodes])) if episodes else None,
        "torch_threads": torch.get_num_threads(),
    }


def one(spec: dict) -> dict:
    """Runs the measurement ``spec`` (``impl``, ``id``, ``n``, ``seconds``, or for PPO ``impl`` =
    ``ppo-ours``/``ppo-dummy`` and ``steps``, ``n_envs``, ``seed``, ``hyper``) and adds the peak
    memory: ``max_rss_kb`` of this process (and for async that of its largest worker), with
    ``rss_imports_kb``, the peak before the measurement (the imports of its libraries), and
    ``rss_end_kb``, the resident set at the end of the timed loop (the env still open)."""
    impl = spec["impl"]
    _import_libraries(impl)
    before = peak_rss_kb()
    if impl.startswith("ppo-"):
        out = run_ppo(
            impl[4:], spec["id"], spec["steps"], spec["n_envs"], spec["seed"], spec["hyper"]
        )
    elif impl == "pgx":
        out = measure_pgx(spec["id"], spec["n"], spec["seconds"])
    else:
        out = measure_numpy(impl, spec["id"], spec["n"], spec["seconds"])
    out["max_rss_kb"] = peak_rss_kb()
    out["rss_imports_kb"] = before
    if impl == "async":
        out["max_rss_worker_kb"] = peak_rss_kb(resource.RUSAGE_CHILDREN)
    return out


def _import_libraries(impl: str) -> None:
    """Imports what the measurement ``impl`` uses (so that their memory is measured apart)."""
    if impl == "pgx":
        import jax  # noqa: F401
        import pgx  # noqa: F401
    else:
        import mc_envs.vector  # noqa: F401
    if impl.startswith("ppo-"):
        import sb3_contrib  # noqa: F401
        import torch  # noqa: F401
