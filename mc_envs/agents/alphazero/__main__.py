"""``python -m mc_envs.agents.alphazero --minutes 50 --out model.npz [--resume]``: trains a model."""

import sys

from mc_envs.agents.alphazero.loop import main

sys.exit(main())
