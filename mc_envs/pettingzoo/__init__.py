"""PettingZoo AEC envs of the two-player games (``pip install "mc-envs[pettingzoo]"``), one module
per env as in PettingZoo classic: ``connect_four_v0.env()`` (with PettingZoo's wrappers) and
``connect_four_v0.raw_env()``; the same for ``tictactoe_v0`` and ``go_v0``. They pass PettingZoo's
``api_test``, ``seed_test`` and ``render_test``. Without PettingZoo, importing this package or one of its modules raises
:class:`mc_envs.extras.MissingExtra`, an ImportError naming the extra to install.
"""

from mc_envs.extras import require

require("pettingzoo", "pettingzoo", "mc_envs.pettingzoo")

from mc_envs.pettingzoo import connect_four_v0, go_v0, tictactoe_v0  # noqa: E402
from mc_envs.pettingzoo.aec import TwoPlayerAEC  # noqa: E402

__all__ = ["TwoPlayerAEC", "connect_four_v0", "go_v0", "tictactoe_v0"]
