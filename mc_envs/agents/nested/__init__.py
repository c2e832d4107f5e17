"""Nested searches: NMCS (:mod:`~mc_envs.agents.nested.nmcs`, its parallel moves
:mod:`~mc_envs.agents.nested.nmcs_parallel`) and NRPA (:mod:`~mc_envs.agents.nested.nrpa`: its compiled core
:mod:`~mc_envs.agents.nested.nrpa_core`, variants :mod:`~mc_envs.agents.nested.nrpa_options`, checkpointed state
:mod:`~mc_envs.agents.nested.nrpa_state`, distributed top level :mod:`~mc_envs.agents.nested.nrpa_distributed`)."""
