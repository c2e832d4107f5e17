"""``python -m mc_envs.cli``: the ``mc-envs`` command."""

import sys

from mc_envs.cli import main

sys.exit(main())
