"""Tree searches: the array tree and its template (:mod:`~mc_envs.agents.mcts.tree`), UCT
(:mod:`~mc_envs.agents.mcts.uct`), PUCT with priors and learned evaluators (:mod:`~mc_envs.agents.mcts.puct`,
:mod:`~mc_envs.agents.mcts.puct_eval`), batched PUCT over vector envs (:mod:`~mc_envs.agents.mcts.puct_batch`,
:mod:`~mc_envs.agents.mcts.puct_batch_core`) and named difficulties (:mod:`~mc_envs.agents.mcts.presets`)."""
