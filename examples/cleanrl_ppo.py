"""PPO in CleanRL's style (one file, torch, CPU) learns Connect Four against the random player.

    python examples/cleanrl_ppo.py --total-timesteps 200000 --seed 1

The envs are ``gym.make_vec("mc_envs/ConnectFour-v0", num_envs=64,
vectorization_mode="vector_entry_point", opponent="random")``: one compiled call steps all 64 games,
the random player answering inside it. The policy samples from masked logits (the logits of full
columns set to -inf), so it never plays an illegal move. The vector env autoresets at the step
after an episode ends (Gymnasium's NEXT_STEP): that step's action is ignored, its mask marks every
action (the mask once a game is over), and the update leaves those steps out.

It prints the win rate of the untrained policy and of the trained one, each over
``--eval-games`` games, one game per sub-env of a vector env. Needs ``pip install "mc-envs[rl]"``
(PyTorch; its CPU build is enough).
"""

from __future__ import annotations

import argparse
import time
from dataclasses import dataclass

import gymnasium as gym
import numpy as np
import torch
from torch import nn
from torch.distributions.categorical import Categorical

import mc_envs  # noqa: F401  (registers the ids)

ENV_ID = "mc_envs/ConnectFour-v0"


@dataclass
class Args:
    """The run's settings (CleanRL's names)."""

    seed: int = 1
    total_timesteps: int = 200_000
    num_envs: int = 64
    num_steps: int = 32
    learning_rate: float = 1e-3
    gamma: float = 0.99
    gae_lambda: float = 0.95
    num_minibatches: int = 4
    update_epochs: int = 4
    clip_coef: float = 0.2
    ent_coef: float = 0.01
    vf_coef: float = 0.5
    max_grad_norm: float = 0.5
    eval_games: int = 1000


def parse_args(argv: list[str] | None) -> Args:
    """:class:`Args` from the command line: ``--total-timesteps``, ``--seed``, ... (every field)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    for name, value in vars(Args()).items():
        parser.add_argument(f"--{name.replace('_', '-')}", type=type(value), default=value)
    return Args(**vars(parser.parse_args(argv)))


def layer_init(layer: nn.Linear, std: float = np.sqrt(2), bias: float = 0.0) -> nn.Linear:
    """CleanRL's orthogonal initialization."""
    torch.nn.init.orthogonal_(layer.weight, std)
    torch.nn.init.constant_(layer.bias, bias)
    return layer


class Agent(nn.Module):
    """CleanRL's actor-critic MLP, with masked logits."""

    def __init__(self, obs_size: int, actions: int) -> None:
        super().__init__()
        self.critic = nn.Sequential(
            layer_init(nn.Linear(obs_size, 128)),
            nn.Tanh(),
            layer_init(nn.Linear(128, 128)),
            nn.Tanh(),
            layer_init(nn.Linear(128, 1), std=1.0),
        )
        self.actor = nn.Sequential(
            layer_init(nn.Linear(obs_size, 128)),
            nn.Tanh(),
            layer_init(nn.Linear(128, 128)),
            nn.Tanh(),
            layer_init(nn.Linear(128, actions), std=0.01),
        )

    def get_value(self, x: torch.Tensor) -> torch.Tensor:
        """The critic's value of each observation."""
        return self.critic(x)

    def get_action_and_value(self, x, mask, action=None):
        """An action sampled from the masked policy (or ``action``), its log-probability, the
        policy's entropy and the critic's value."""
        logits = self.actor(x).masked_fill(~mask, -torch.inf)  # illegal actions: probability 0
        probs = Categorical(logits=logits)
        if action is None:
            action = probs.sample()
        return action, probs.log_prob(action), probs.entropy(), self.critic(x)


def make_envs(n: int) -> gym.vector.VectorEnv:
    """``n`` games against the random player, stepped by one compiled call on this thread
    (``threads=1``: numba's parallel threads would wait spinning beside torch's, slowing it)."""
    return gym.make_vec(
        ENV_ID, num_envs=n, vectorization_mode="vector_entry_point", opponent="random", threads=1
    )


def to_tensor(obs: np.ndarray) -> torch.Tensor:
    """The ``[N, 2, 6, 7]`` int8 observations as ``[N, 84]`` float32, the MLP's input."""
    return torch.as_tensor(obs, dtype=torch.float32).reshape(len(obs), -1)


def win_rate(agent: Agent, games: int, seed: int) -> float:
    """The share of ``games`` games the agent's sampled policy wins (one game per sub-env)."""
    envs = make_envs(games)
    obs, info = envs.reset(seed=seed)
    result = np.full(games, np.nan)
    with torch.no_grad():
        while np.isnan(result).any():
            mask = torch.as_tensor(info["action_mask"])
            action, *_ = agent.get_action_and_value(to_tensor(obs), mask)
            obs, reward, terminated, truncated, info = envs.step(action.numpy())
            first = np.isnan(result) & (terminated | truncated)
            result[first] = reward[first]
    envs.close()
    return float(np.mean(result == 1.0))


def sizes(envs: gym.vector.VectorEnv) -> tuple[int, int]:
    """A sub-env's observation size and number of actions (a flat Box, a Discrete)."""
    observations, actions = envs.single_observation_space, envs.single_action_space
    assert observations.shape is not None and isinstance(actions, gym.spaces.Discrete)
    return int(np.prod(observations.shape)), int(actions.n)


def train(args: Args, agent: Agent, envs: gym.vector.VectorEnv) -> None:
    """CleanRL's PPO loop, with the masks stored beside the observations."""
    n, steps = args.num_envs, args.num_steps
    batch_size = n * steps
    minibatch_size = batch_size // args.num_minibatches
    optimizer = torch.optim.Adam(agent.parameters(), lr=args.learning_rate, eps=1e-5)
    obs_size, a = sizes(envs)
    obs = torch.zeros((steps, n, obs_size))
    masks = torch.zeros((steps, n, a), dtype=torch.bool)
    actions = torch.zeros((steps, n), dtype=torch.long)
    logprobs, rewards, dones, values = (torch.zeros((steps, n)) for _ in range(4))
    valid = torch.zeros((steps, n), dtype=torch.bool)  # False: an autoreset step (action ignored)

    next_obs, info = envs.reset(seed=args.seed)
    next_obs, next_mask = to_tensor(next_obs), torch.as_tensor(info["action_mask"])
    next_done = torch.zeros(n)
    iterations = max(1, args.total_timesteps // batch_size)
    for iteration in range(1, iterations + 1):
        frac = 1.0 - (iteration - 1.0) / iterations  # learning-rate annealing
        optimizer.param_groups[0]["lr"] = frac * args.learning_rate
        for step in range(steps):
            obs[step], masks[step], dones[step] = next_obs, next_mask, next_done
            valid[step] = next_done == 0
            with torch.no_grad():
                action, logprob, _, value = agent.get_action_and_value(next_obs, next_mask)
            values[step], actions[step], logprobs[step] = value.flatten(), action, logprob
            next_obs, reward, terminated, truncated, info = envs.step(action.numpy())
            rewards[step] = torch.as_tensor(reward, dtype=torch.float32)
            next_obs, next_mask = to_tensor(next_obs), torch.as_tensor(info["action_mask"])
            next_done = torch.as_tensor(terminated | truncated, dtype=torch.float32)

        with torch.no_grad():  # generalized advantage estimation
            next_value = agent.get_value(next_obs).reshape(1, -1)
            advantages = torch.zeros_like(rewards)
            lastgaelam = torch.zeros(n)
            for t in reversed(range(steps)):
                if t == steps - 1:
                    nextnonterminal, nextvalues = 1.0 - next_done, next_value
                else:
                    nextnonterminal, nextvalues = 1.0 - dones[t + 1], values[t + 1]
                delta = rewards[t] + args.gamma * nextvalues * nextnonterminal - values[t]
                lastgaelam = delta + args.gamma * args.gae_lambda * nextnonterminal * lastgaelam
                advantages[t] = lastgaelam
            returns = advantages + values

        keep = valid.reshape(-1)
        b_obs, b_masks = obs.reshape(-1, obs_size)[keep], masks.reshape(-1, a)[keep]
        b_logprobs, b_actions = logprobs.reshape(-1)[keep], actions.reshape(-1)[keep]
        b_advantages, b_returns = advantages.reshape(-1)[keep], returns.reshape(-1)[keep]
        b_values = values.reshape(-1)[keep]
        size = len(b_obs)
        for _ in range(args.update_epochs):
            order = torch.randperm(size)
            for start in range(0, size, minibatch_size):
                mb = order[start : start + minibatch_size]
                _, newlogprob, entropy, newvalue = agent.get_action_and_value(
                    b_obs[mb], b_masks[mb], b_actions[mb]
                )
                ratio = (newlogprob - b_logprobs[mb]).exp()
                mb_adv = b_advantages[mb]
                mb_adv = (mb_adv - mb_adv.mean()) / (mb_adv.std() + 1e-8)
                pg_loss = torch.max(
                    -mb_adv * ratio,
                    -mb_adv * torch.clamp(ratio, 1 - args.clip_coef, 1 + args.clip_coef),
                ).mean()
                newvalue = newvalue.view(-1)
                v_clipped = b_values[mb] + torch.clamp(
                    newvalue - b_values[mb], -args.clip_coef, args.clip_coef
                )
                v_loss = (
                    0.5
                    * torch.max(
                        (newvalue - b_returns[mb]) ** 2, (v_clipped - b_returns[mb]) ** 2
                    ).mean()
                )
                loss = pg_loss - args.ent_coef * entropy.mean() + args.vf_coef * v_loss
                optimizer.zero_grad()
                loss.backward()
                nn.utils.clip_grad_norm_(agent.parameters(), args.max_grad_norm)
                optimizer.step()


def main(argv: list[str] | None = None) -> dict[str, float]:
    """Evaluates the untrained policy, trains, evaluates again; prints and returns the win rates
    (``before``, ``after``) and the training time in seconds (``seconds``)."""
    args = parse_args(argv)
    torch.manual_seed(args.seed)
    torch.set_num_threads(1)  # a small MLP: one thread is fastest; the env steps on the other
    envs = make_envs(args.num_envs)
    agent = Agent(*sizes(envs))
    before = win_rate(agent, args.eval_games, seed=10_000)
    print(f"win rate against the random player, untrained: {before:.3f}")
    start = time.perf_counter()
    train(args, agent, envs)
    seconds = time.perf_counter() - start
    envs.close()
    after = win_rate(agent, args.eval_games, seed=10_000)
    print(f"win rate against the random player, trained:   {after:.3f}")
    print(f"{args.total_timesteps:,} steps on {args.num_envs} envs in {seconds:.1f} s")
    return {"before": before, "after": after, "seconds": seconds}


if __name__ == "__main__":
    main()
