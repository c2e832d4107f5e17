"""``python -m mc_envs.agents.warmup``: the warm-up; ``--serve``: one of its children."""

import sys

from mc_envs.agents.warmup import warm_here
from mc_envs.agents.warmup.work import serve

if sys.argv[1:] == ["--serve"]:
    serve()
else:
    print(warm_here())
