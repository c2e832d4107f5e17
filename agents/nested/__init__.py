"""Nested searches: NMCS (:mod:`~agents.nested.nmcs`, its parallel moves
:mod:`~agents.nested.nmcs_parallel`) and NRPA (:mod:`~agents.nested.nrpa`: its compiled core
:mod:`~agents.nested.nrpa_core`, variants :mod:`~agents.nested.nrpa_options`, checkpointed state
:mod:`~agents.nested.nrpa_state`, distributed top level :mod:`~agents.nested.nrpa_distributed`)."""
