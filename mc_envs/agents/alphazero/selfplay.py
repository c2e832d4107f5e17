"""Self-play: games of a model against itself, every move chosen by a PUCT search it guides."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol, cast, runtime_checkable

import gymnasium as gym
import numpy as np

from mc_envs.agents.alphazero.model import Model, alphazero_agent
from mc_envs.core import PlanningContract
from mc_envs.vector import PlanningVectorEnv, VectorState

if TYPE_CHECKING:
    from mc_envs.agents.mcts.puct_batch import BatchResult


@runtime_checkable
class TwoPlayerGame(PlanningContract, Protocol):
    """What self-play and training use of a two-player env (the built-in ones)."""

    observation_space: gym.spaces.Box

    def observation(self) -> np.ndarray:
        """The observation of the current state."""
        ...

    def returns(self) -> np.ndarray:
        """The players' returns ``[player 0, player 1]``: +1 win, -1 loss, 0 draw or unfinished."""
        ...

    def symmetries(self) -> list[tuple[np.ndarray, np.ndarray]]:
        """The board's symmetries: pairs of observation and action index permutations."""
        ...


Positions = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]


def self_play(
    model: Model, *, sims: int, seed: int, explore_moves: int = 8, alpha: float = 1.0
) -> Positions:
    """One game of self-play: the positions' (observations, masks, visit distributions, outcomes
    for the player to move there)."""
    env = two_player_env(model.env_id)
    env.reset(seed=seed)
    agent = alphazero_agent(model, sims=sims, seed=seed, dirichlet_alpha=alpha, c=1.5)
    rng = np.random.default_rng(seed)
    obs, masks, pis, movers = [], [], [], []
    while len(env.legal_actions()):
        result = agent.search(cast(gym.Env, env))  # a TwoPlayerGame is a gym.Env at run time
        actions, visits = result.root_actions, result.root_visits
        if actions is None or visits is None:
            raise RuntimeError("the PUCT search returned no root statistics")
        pi = np.zeros(model.n_actions, np.float32)
        pi[actions] = visits / max(visits.sum(), 1)
        obs.append(np.asarray(env.observation(), np.float32).ravel())
        masks.append(env.action_masks())
        pis.append(pi)
        movers.append(env.current_player)
        if len(movers) <= explore_moves:
            action = int(rng.choice(model.n_actions, p=pi))
        else:
            action = int(actions[np.argmax(visits)])
        env.step(action)
    returns = env.returns()
    z = np.array([returns[m] for m in movers], np.float32)
    return np.array(obs), np.array(masks), np.array(pis), z


def self_play_batch(
    model: Model,
    *,
    games: int,
    sims: int,
    seed: int,
    parallel: int = 64,
    explore_moves: int = 8,
    alpha: float = 1.0,
    gumbel: int | None = None,
    opening: int = 0,
    cap: tuple[int, float] | None = None,
) -> Positions:
    """``games`` games of self-play, ``parallel`` at a time in a compiled vector env, every move of
    every game chosen by one batched PUCT search (:meth:`mc_envs.agents.mcts.puct.PUCT.search_batch`: one
    network call a simulation for all the games). The same play as :func:`self_play` (noise at
    the root, the first ``explore_moves`` moves sampled from the visits, then the most visited);
    a game that ends makes room for the next. Two-player games.

    With ``gumbel=k``, Gumbel AlphaZero instead (:mod:`mc_envs.agents.mcts.gumbel`): no root noise; the
    policy (the target, and where the first moves are sampled from) is the improved policy, and
    later moves are the search's choice among ``k`` actions drawn by Gumbel noise.

    With ``opening=K``, every game starts from a random opening (:func:`play_openings`): between 0
    and ``K`` moves drawn from the game's heuristic prior, played without search and not recorded,
    so that self-play also learns positions its own play rarely reaches.

    With ``cap=(n, share)``, playout cap randomization (KataGo, Wu 2019): each move of the batch
    is, with probability ``share``, a full search of ``sims`` simulations (with root noise),
    recorded; otherwise a fast search of ``n`` simulations without noise, played but not recorded.

    Returns:
        The positions of the finished games: (observations, masks, visit distributions, outcomes
        for the player to move there), as :func:`self_play`.
    """
    import mc_envs  # noqa: F401  (registers the ids)

    if cap is not None and not (cap[0] >= 1 and 0.0 < cap[1] <= 1.0):
        raise ValueError(f"cap must be (simulations >= 1, share in (0, 1]), got {cap!r}")
    m = min(parallel, games)
    envs, base, info = _vector_env(model.env_id, m, seed)
    noise = None if gumbel else alpha
    agent = alphazero_agent(model, sims=sims, seed=seed, dirichlet_alpha=noise, c=1.5)
    fast = (
        None if cap is None else alphazero_agent(model, seed=seed + 1, dirichlet_alpha=None, c=1.5)
    )
    rng = np.random.default_rng(seed)
    slots = _Slots.new(m, games, opening)
    while slots.finished < games:
        info = slots.open(base, rng, info)
        searcher, n_sims = agent, sims
        if cap is not None and fast is not None and rng.random() >= cap[1]:
            searcher, n_sims = fast, cap[0]
        result = searcher.search_batch(envs, simulations=n_sims, gumbel=gumbel)
        actions, playing = slots.record(base, info, result, searcher is agent, explore_moves, rng)
        _, rewards, terminated, _, info = envs.step(np.maximum(actions, 0))
        slots.finish(rewards, terminated & playing)
    envs.close()
    return _positions(slots.out, model)


def _vector_env(
    env_id: str, m: int, seed: int
) -> tuple[gym.vector.VectorEnv, PlanningVectorEnv, dict]:
    """The compiled vector env of ``m`` games of ``env_id``, reset: (env, its planning env, info).

    Raises:
        ValueError: ``env_id`` is not a two-player game.
    """
    envs = gym.make_vec(env_id, num_envs=m, vectorization_mode="vector_entry_point")
    base = envs.unwrapped
    if not isinstance(base, PlanningVectorEnv) or not base._two_player:
        raise ValueError(f"self_play_batch plays two-player games, not {env_id}")
    _, info = envs.reset(seed=seed)
    return envs, base, info


@dataclass
class _Slots:
    """The games :func:`self_play_batch` plays, slot by slot, and the positions they recorded."""

    games: int  # the games to play in all
    opening: int
    rows: list[list[tuple]]  # each slot's game so far
    idle: np.ndarray  # slots with no game to start
    pending: np.ndarray  # slots whose new game still waits for its opening
    started: int
    finished: int = 0
    out: list[tuple] = field(default_factory=list)

    @classmethod
    def new(cls, m: int, games: int, opening: int) -> _Slots:
        """``m`` slots, each starting a game."""
        rows: list[list[tuple]] = [[] for _ in range(m)]
        return cls(games, opening, rows, np.zeros(m, bool), np.full(m, opening > 0), started=m)

    def open(self, base: PlanningVectorEnv, rng: np.random.Generator, info: dict) -> dict:
        """Plays the openings of the new games that wait for one; the step info, updated."""
        fresh = np.flatnonzero(self.pending & ~base.autoreset)
        if len(fresh):
            play_openings(base, fresh, self.opening, rng)
            self.pending[fresh] = False
            info = {**info, "action_mask": base.action_masks(), "current_player": base.players()}
        return info

    def record(
        self,
        base: PlanningVectorEnv,
        info: dict,
        result: BatchResult,
        full: bool,
        explore_moves: int,
        rng: np.random.Generator,
    ) -> tuple[np.ndarray, np.ndarray]:
        """Records the positions searched (kept if ``full``); the actions to play (the first
        ``explore_moves`` of a game sampled from the visits) and the slots playing one."""
        policy = result.policy.astype(np.float32)
        obs = np.asarray(base.observation(), np.float32).reshape(len(self.rows), -1)
        masks, movers = info["action_mask"], info["current_player"]
        actions = result.actions.copy()
        playing = ~self.idle & ~base.autoreset & (actions >= 0)
        for i in np.flatnonzero(playing):
            self.rows[i].append((obs[i], masks[i], policy[i], int(movers[i]), full))
            if len(self.rows[i]) <= explore_moves:
                actions[i] = rng.choice(policy.shape[1], p=policy[i] / policy[i].sum())
        return actions, playing

    def finish(self, rewards: np.ndarray, ended: np.ndarray) -> None:
        """Keeps the full searches of the games that ``ended``; their slots start a game or idle."""
        for i in np.flatnonzero(ended):
            first = rewards[i] if self.rows[i][-1][3] == 0 else -rewards[i]  # player 0's return
            self.out += [
                (o, k, p, first if who == 0 else -first)
                for o, k, p, who, kept in self.rows[i]
                if kept
            ]
            self.finished += 1
            self.rows[i] = []
            self.idle[i] = self.started >= self.games
            self.pending[i] = self.opening > 0 and not self.idle[i]
            self.started += 1


def _positions(out: list[tuple], model: Model) -> Positions:
    """The recorded positions as arrays (none: empty arrays of the model's shapes)."""
    if not out:  # no full search in these games (playout cap randomization)
        a = model.n_actions
        return (
            np.zeros((0, model.obs_size), np.float32),
            np.zeros((0, a), bool),
            np.zeros((0, a)),
            np.zeros(0),
        )
    obs_, masks_, pis_, z_ = zip(*out, strict=True)
    return np.array(obs_), np.array(masks_), np.array(pis_), np.array(z_, np.float32)


def two_player_env(env_id: str) -> TwoPlayerGame:
    """A fresh env of ``env_id``, unwrapped; ValueError unless it is a two-player game."""
    import mc_envs  # noqa: F401  (registers the ids)

    env = gym.make(env_id).unwrapped
    if not isinstance(env, TwoPlayerGame):
        raise ValueError(f"AlphaZero plays two-player games, not {env_id}")
    return env


def play_openings(
    base: PlanningVectorEnv, slots: np.ndarray, most: int, rng: np.random.Generator
) -> None:
    """Plays in each of the ``slots`` of the vector env ``base`` (a
    :class:`mc_envs.vector.PlanningVectorEnv`) between 0 and ``most`` moves (uniformly many),
    each drawn from the game's first compiled prior (``Kernel.priors``; uniform without one),
    stopping before a move that would end the game."""
    kernel = base.proto.kernel
    prior = next(iter(kernel.priors.values()), None)
    snap = base.clone_state()
    data = snap.data.copy()
    actions = np.zeros(kernel.max_actions, np.int64)
    p = np.zeros(kernel.max_actions)
    for i in slots:
        state = data[i].copy()
        ws = kernel.workspace(state)
        n = kernel.legal(state, ws, actions)
        for _ in range(int(rng.integers(0, most + 1))):
            if n == 0:
                break
            if prior is None:
                p[:n] = 1.0
            else:
                prior(state, actions, n, p)
            after = state.copy()
            kernel.play(after, actions[rng.choice(n, p=p[:n] / p[:n].sum())], ws)
            n = kernel.legal(after, ws, actions)  # the next move's choices
            if n == 0:
                break  # that move ended the game: the opening stops before it
            state = after
        data[i] = state
    base.restore_state(VectorState(snap.game, snap.config, data, snap.autoreset, snap.opponent_rng))
