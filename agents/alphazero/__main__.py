"""``python -m agents.alphazero --minutes 50 --out model.npz [--resume]``: trains a model."""

import sys

from agents.alphazero.loop import main

sys.exit(main())
