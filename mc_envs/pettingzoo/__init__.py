"""PettingZoo AEC envs of the two-player games (``pip install "mc-envs[pettingzoo]"``), one module
per env as in PettingZoo classic: ``connect_four_v0.env()`` (with PettingZoo's wrappers) and
``connect_four_v0.raw_env()``; the same for ``tictactoe_v0`` and ``go_v0``::

    from mc_envs.pettingzoo import connect_four_v0

    env = connect_four_v0.env()  # raw_env() without the wrappers
    env.reset(seed=0)
    for agent in env.agent_iter():
        obs, reward, termination, truncation, info = env.last()
        mask = obs["action_mask"]
        action = None if termination or truncation else env.action_space(agent).sample(mask)
        env.step(action)

Render modes as PettingZoo classic's: ``env(render_mode="human")`` draws a window at every step,
``"ansi"`` and ``"rgb_array"`` make ``render()`` return text or an ``H x W x 3`` array.
Observations, rewards, agents and render modes: see :mod:`mc_envs.pettingzoo.aec`. They pass
PettingZoo's ``api_test``, ``seed_test`` and ``render_test``. Without PettingZoo, importing this
package or one of its modules raises :class:`mc_envs.extras.MissingExtra`, an ImportError naming
the extra to install.
"""

from mc_envs.extras import require

require("pettingzoo", "pettingzoo", "mc_envs.pettingzoo")

from mc_envs.pettingzoo import connect_four_v0, go_v0, tictactoe_v0  # noqa: E402
from mc_envs.pettingzoo.aec import TwoPlayerAEC  # noqa: E402

__all__ = ["TwoPlayerAEC", "connect_four_v0", "go_v0", "tictactoe_v0"]
