"""AlphaZero on a CPU: the training loop lowers the loss; models save, load and play; bad files fail."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

import mc_envs  # noqa: F401
from mc_envs.agents.alphazero import (
    Model,
    Trainer,
    alphazero_agent,
    init_model,
    self_play,
    self_play_batch,
    train,
    window_size,
)


def test_a_short_training_lowers_the_loss(tmp_path) -> None:
    out = tmp_path / "model.npz"
    model, history = train(
        "mc_envs/TicTacToe-v0",
        minutes=5,
        iterations=2,
        games=4,
        sims=20,
        steps=60,
        batch=64,
        hidden=32,
        out=str(out),
        log=lambda line: None,
    )
    assert len(history) == 2
    for it in history:
        assert it["loss_after"] < it["loss_before"]
    again = Model.load(out)
    obs = np.random.default_rng(0).integers(0, 2, size=(5, model.obs_size)).astype(np.float32)
    masks = np.ones((5, model.n_actions), bool)
    for a, b in zip(model(obs, masks), again(obs, masks)):
        np.testing.assert_allclose(a, b, rtol=1e-6)
    resumed, more = train(
        "mc_envs/TicTacToe-v0",
        minutes=5,
        iterations=3,  # in all: one more
        games=2,
        sims=10,
        steps=5,
        batch=32,
        lr=5e-4,  # a schedule's drop: each iteration records its rate
        out=str(out),
        resume=True,
        log=lambda line: None,
    )
    assert resumed.obs_size == model.obs_size and more[:2] == history and len(more) == 3
    assert [h["lr"] for h in more] == [1e-3, 1e-3, 5e-4]


def test_a_resumed_run_continues_exactly_and_a_bad_run_file_is_refused(tmp_path) -> None:
    settings = dict(minutes=5, games=3, sims=8, steps=20, batch=16, hidden=8, log=lambda line: None)
    straight, history = train(
        "mc_envs/TicTacToe-v0", iterations=3, out=str(tmp_path / "a.npz"), **settings
    )
    b = tmp_path / "b.npz"
    train("mc_envs/TicTacToe-v0", iterations=1, out=str(b), **settings)
    resumed, again = train(
        "mc_envs/TicTacToe-v0", iterations=3, out=str(b), resume=True, **settings
    )
    for name, value in straight.params.items():
        assert np.array_equal(value, resumed.params[name]), name
    assert [h["loss_after"] for h in again] == [h["loss_after"] for h in history]
    run = tmp_path / "b.npz.train.npz"
    data = dict(np.load(run, allow_pickle=False))
    data["buf_pi"] = data["buf_pi"][:, :4]  # a hand-edited buffer
    np.savez(run, **data)
    with pytest.raises(ValueError, match=r"b.npz.train.npz: array buf_pi is float32\[\d+, 4\]"):
        train("mc_envs/TicTacToe-v0", iterations=4, out=str(b), resume=True, **settings)
    run.write_bytes(b"not a zip")
    with pytest.raises(ValueError, match="not a training checkpoint"):
        train("mc_envs/TicTacToe-v0", iterations=4, out=str(b), resume=True, **settings)


def test_self_play_records_visit_distributions_and_outcomes() -> None:
    model = init_model("mc_envs/TicTacToe-v0", 18, 9, hidden=16)
    obs, masks, pis, z = self_play(model, sims=16, seed=3)
    assert len(obs) == len(masks) == len(pis) == len(z) >= 5
    np.testing.assert_allclose(pis.sum(axis=1), 1.0, rtol=1e-6)
    assert not (pis[~masks] > 0).any()  # visits only on legal moves
    assert set(np.unique(z)) <= {-1.0, 0.0, 1.0}
    assert (z[1:] == -z[:-1]).all()  # the players alternate: each outcome from the mover's side


def test_batched_self_play_plays_whole_games_from_the_mover_s_side() -> None:
    model = init_model("mc_envs/TicTacToe-v0", 18, 9, hidden=16)
    obs, masks, pis, z = self_play_batch(model, games=1, sims=16, seed=3, parallel=1)
    stones = obs.sum(axis=1)
    assert (stones == np.arange(len(obs))).all()  # one game, every position in order
    np.testing.assert_allclose(pis.sum(axis=1), 1.0, rtol=1e-6)
    assert not (pis[~masks] > 0).any()
    assert set(np.unique(z)) <= {-1.0, 0.0, 1.0} and (z[1:] == -z[:-1]).all()
    # The last move won the game for its player, or filled the board in a draw.
    assert z[-1] == 1.0 or (z[-1] == 0.0 and len(obs) == 9)
    # Six games, four at a time: each game starts from the empty board once.
    obs, masks, pis, z = self_play_batch(model, games=6, sims=8, seed=5, parallel=4)
    assert (obs.sum(axis=1) == 0).sum() == 6 and len(obs) == len(z) >= 6 * 5


def test_gumbel_self_play_records_improved_policies() -> None:
    model = init_model("mc_envs/TicTacToe-v0", 18, 9, hidden=16)
    obs, masks, pis, z = self_play_batch(model, games=6, sims=8, seed=5, parallel=4, gumbel=4)
    assert (obs.sum(axis=1) == 0).sum() == 6 and len(obs) == len(z) >= 6 * 5
    np.testing.assert_allclose(pis.sum(axis=1), 1.0, rtol=1e-6)
    # A softmax over the legal moves, not visit counts (8 simulations leave moves unvisited).
    assert ((pis > 0) == masks).all()
    assert set(np.unique(z)) <= {-1.0, 0.0, 1.0}


def test_openings_are_prior_moves_that_stop_short_of_the_end() -> None:
    from mc_envs.agents.alphazero.selfplay import play_openings

    envs = gym.make_vec(
        "mc_envs/ConnectFour-v0", num_envs=200, vectorization_mode="vector_entry_point"
    )
    base = envs.unwrapped
    envs.reset(seed=0)
    slots = np.arange(0, 200, 2)
    play_openings(base, slots, 30, np.random.default_rng(1))
    stones = base.observation().reshape(200, -1).sum(axis=1)
    assert (stones[1::2] == 0).all()  # the other slots are untouched
    assert stones[slots].max() <= 30 and len(np.unique(stones[slots])) > 10
    assert base.action_masks()[slots].any(axis=1).all()  # no opening ends the game
    players = base.players()
    assert (players == stones % 2).all()
    # The prior weighs the centre: over 100 openings, the centre column holds the most stones.
    columns = base.observation().reshape(200, 2, 6, 7).sum(axis=(0, 1, 2))
    assert columns.argmax() == 3
    # Play goes on from an opening: every recorded game is a legal continuation.
    model = init_model("mc_envs/TicTacToe-v0", 18, 9, hidden=16)
    obs, masks, pis, z = self_play_batch(model, games=20, sims=8, seed=5, parallel=8, opening=6)
    assert 0 < (obs.sum(axis=1) == 0).sum() < 20  # some games start after an opening
    np.testing.assert_allclose(pis.sum(axis=1), 1.0, rtol=1e-6)
    assert not (pis[~masks] > 0).any() and set(np.unique(z)) <= {-1.0, 0.0, 1.0}
    envs.close()


def test_playout_cap_randomization_records_only_full_searches() -> None:
    model = init_model("mc_envs/TicTacToe-v0", 18, 9, hidden=16)
    # 20 games of at least 5 moves each: 100 moves or more, all recorded at share 1.
    obs, masks, pis, z = self_play_batch(model, games=20, sims=8, seed=5, parallel=8, cap=(2, 1.0))
    assert len(obs) >= 100
    obs, masks, pis, z = self_play_batch(model, games=20, sims=8, seed=5, parallel=8, cap=(2, 0.1))
    assert 0 < len(obs) < 40  # about a tenth of the moves
    np.testing.assert_allclose(pis.sum(axis=1), 1.0, rtol=1e-6)
    assert not (pis[~masks] > 0).any() and set(np.unique(z)) <= {-1.0, 0.0, 1.0}
    with pytest.raises(ValueError, match="cap must be"):
        self_play_batch(model, games=2, sims=8, seed=5, cap=(0, 0.5))


def test_the_trainer_fits_a_fixed_buffer() -> None:
    model = init_model("mc_envs/TicTacToe-v0", 18, 9, hidden=32)
    trainer = Trainer(model)
    trainer.add(*self_play(model, sims=8, seed=1))
    before = trainer.loss()
    trainer.train(200, 32, np.random.default_rng(0))
    assert trainer.loss() < 0.75 * before  # the policy part cannot go below the entropy of pi


@pytest.mark.parametrize("env_id", ["mc_envs/ConnectFour-v0", "mc_envs/TicTacToe-v0"])
def test_each_symmetry_maps_a_game_onto_a_game(env_id) -> None:
    a, b = gym.make(env_id).unwrapped, gym.make(env_id).unwrapped
    symmetries = a.symmetries()
    assert len(symmetries) == (1 if "Connect" in env_id else 7)
    rng = np.random.default_rng(0)
    for obs_perm, act_perm in symmetries:
        assert sorted(obs_perm) == list(range(int(np.prod(a.observation_space.shape))))
        for game in range(5):
            a.reset(seed=game)
            b.reset(seed=game)
            done = False
            while not done:
                assert np.array_equal(
                    np.asarray(b.observation()).ravel(), a.observation().ravel()[obs_perm]
                )
                assert np.array_equal(b.action_masks(), a.action_masks()[act_perm])
                move = int(rng.choice(a.legal_actions()))
                _, r, done, _, _ = a.step(move)
                _, r2, done2, _, _ = b.step(int(np.flatnonzero(act_perm == move)[0]))
                assert (r, done) == (r2, done2)
    # Connect Four's mirror is the column flip.
    if "Connect" in env_id:
        assert list(symmetries[0][1]) == [6, 5, 4, 3, 2, 1, 0]


def test_the_buffer_stores_symmetric_images_and_samples_a_growing_window() -> None:
    env = gym.make("mc_envs/ConnectFour-v0").unwrapped
    model = init_model("mc_envs/ConnectFour-v0", 84, 7, hidden=8)
    trainer = Trainer(model, capacity=10, window=4, symmetries=env.symmetries())
    obs = np.arange(3 * 84, dtype=np.float32).reshape(3, 84)
    pi = np.eye(7, dtype=np.float32)[[0, 1, 2]]
    trainer.add(obs, pi > 0, pi, np.array([1.0, -1.0, 0.0], np.float32))
    assert trainer.size == trainer.seen == 6
    mirror = trainer.buffer["obs"][3:6].reshape(3, 2, 6, 7)
    assert np.array_equal(mirror, obs.reshape(3, 2, 6, 7)[..., ::-1])
    assert np.array_equal(trainer.buffer["pi"][3:6].argmax(axis=1), [6, 5, 4])
    assert list(trainer.buffer["z"][:6]) == [1, -1, 0, 1, -1, 0]
    trainer.add(obs, pi > 0, pi, np.zeros(3, np.float32))  # the ring wraps: 12 seen, 10 kept
    assert (trainer.size, trainer.next, trainer.seen) == (10, 2, 12)
    assert list(trainer.recent(3)) == [1, 0, 9]
    # The window: everything up to its smallest size, then growing slower than the positions.
    assert [window_size(n, 10**6, 1000) for n in (10, 1000)] == [10, 1000]
    grown = [window_size(n, 10**6, 1000) for n in (2000, 8000, 64000)]
    assert 1000 < grown[0] < grown[1] < grown[2] < 64000 / 4
    assert window_size(10**9, 5000, 1000) == 5000


def test_a_model_plays_legal_moves_through_puct() -> None:
    model = init_model("mc_envs/ConnectFour-v0", 84, 7, hidden=16)
    env = gym.make("mc_envs/ConnectFour-v0").unwrapped
    env.reset()
    agent = alphazero_agent(model, sims=30)
    for _ in range(6):
        move = agent.act(env)
        assert move in env.legal_actions()
        env.step(move)


def test_bad_model_files_name_the_file_and_array(tmp_path) -> None:
    model = init_model("mc_envs/ConnectFour-v0", 84, 7, hidden=8)
    path = tmp_path / "m.npz"
    model.save(path)
    params = dict(model.params)
    params["wp"] = params["wp"][:, :3]
    Model("mc_envs/ConnectFour-v0", params).save(tmp_path / "bad.npz")
    with pytest.raises(ValueError, match=r"bad\.npz: array (wp|bp) has shape"):
        Model.load(tmp_path / "bad.npz")
    (tmp_path / "junk.npz").write_bytes(b"\x00junk" * 10)
    with pytest.raises(ValueError, match="junk.npz"):
        Model.load(tmp_path / "junk.npz")
    with pytest.raises(ValueError, match="no such file"):
        Model.load(tmp_path / "missing.npz")
    assert Model.load(path).n_actions == 7


def test_the_resnet_is_one_forward_pass_in_numpy_and_jax_and_convolves_as_written(tmp_path):
    jnp = pytest.importorskip("jax.numpy")
    from mc_envs.agents.alphazero.net import _conv3, forward, init_params

    arch = {"kind": "resnet", "shape": [2, 6, 7], "channels": 4, "blocks": 2, "hidden": 8}
    params = init_params(arch, 84, 7, seed=1)
    obs = np.random.default_rng(2).integers(0, 2, size=(5, 84)).astype(np.float32)
    a, b = forward(params, obs, arch), forward(params, jnp.asarray(obs), arch, jnp)
    np.testing.assert_allclose(a[0], np.asarray(b[0]), rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(a[1], np.asarray(b[1]), rtol=1e-4, atol=1e-5)
    x = np.random.default_rng(3).standard_normal((2, 4, 5, 3)).astype(np.float32)  # B H W C
    w = np.random.default_rng(4).standard_normal((9 * 3, 2)).astype(np.float32)
    want = np.zeros((2, 4, 5, 2), np.float32)  # a 3x3 convolution with zero padding, by hand
    for i in range(4):
        for j in range(5):
            for di in range(3):
                for dj in range(3):
                    y, xx = i + di - 1, j + dj - 1
                    if 0 <= y < 4 and 0 <= xx < 5:
                        want[:, i, j] += x[:, y, xx] @ w[(di * 3 + dj) * 3 : (di * 3 + dj + 1) * 3]
    np.testing.assert_allclose(_conv3(x, w, 0.0, np), want, rtol=1e-5, atol=1e-5)


def test_a_resnet_trains_saves_loads_and_plays(tmp_path) -> None:
    out = tmp_path / "res.npz"
    settings = dict(games=3, sims=8, steps=30, batch=32, hidden=8, log=lambda line: None)
    model, history = train(
        "mc_envs/TicTacToe-v0",
        minutes=5,
        iterations=2,
        net="resnet",
        channels=4,
        blocks=1,
        out=str(out),
        **settings,
    )
    assert model.arch["kind"] == "resnet" and all(
        h["loss_after"] < h["loss_before"] for h in history
    )
    again = Model.load(out)
    assert again.arch == model.arch
    obs = np.random.default_rng(0).integers(0, 2, size=(3, 18)).astype(np.float32)
    for x, y in zip(model(obs, np.ones((3, 9), bool)), again(obs, np.ones((3, 9), bool))):
        np.testing.assert_array_equal(x, y)
    env = gym.make("mc_envs/TicTacToe-v0").unwrapped
    env.reset(seed=0)
    assert env.action_masks()[alphazero_agent(again, sims=16).act(env)]
    data = dict(np.load(out, allow_pickle=False))
    data["meta"] = np.array(str(data["meta"]).replace('"blocks": 1', '"blocks": -3'))
    np.savez(tmp_path / "bad.npz", **data)
    with pytest.raises(ValueError, match="bad.npz: field arch: resnet blocks must be 0..20"):
        Model.load(tmp_path / "bad.npz")
