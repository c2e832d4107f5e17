"""Tree searches: the array tree and its template (:mod:`~agents.mcts.tree`), UCT
(:mod:`~agents.mcts.uct`), PUCT with priors and learned evaluators (:mod:`~agents.mcts.puct`,
:mod:`~agents.mcts.puct_eval`), batched PUCT over vector envs (:mod:`~agents.mcts.puct_batch`,
:mod:`~agents.mcts.puct_batch_core`) and named difficulties (:mod:`~agents.mcts.presets`)."""
