"""A page per registered id, written at build time from the env class's docstring.

The docstrings carry Gymnasium's sections (Description, Action Space, Observation Space, Rewards,
Episode End, Arguments, Version History) and are the one source of truth: this extension adds the
id, its registered kwargs, the constructor's signature, the command-line names and the picture of
``docs/pictures`` (drawn by ``docs/make_pictures.py``), and writes ``envs/<Name>-v0.md`` and
``envs/index.md`` before Sphinx reads the sources. The generated folder is not committed.
"""

from __future__ import annotations

import importlib
import inspect
import json
import re
from pathlib import Path
from typing import Any

from sphinx.util import logging

logger = logging.getLogger(__name__)

# :class:`x` (reStructuredText) -> {class}`x` (MyST); the docstrings use only these roles.
ROLE = re.compile(r":(class|mod|func|meth|attr|data|exc|obj):`([^`]+)`")
CODE = re.compile(r"(``.+?``|`[^`]+`)")


def slug(env_id: str) -> str:
    """``mc_envs/SameGame-v0`` -> ``SameGame-v0``."""
    return env_id.partition("/")[2]


def env_class(entry_point: str) -> type:
    module, _, name = entry_point.partition(":")
    return getattr(importlib.import_module(module), name)


def to_myst(text: str) -> str:
    """A docstring's body (Markdown headings and lists, reST inline markup) as MyST Markdown."""
    text = ROLE.sub(r"{\1}`\2`", text)
    # A backslash outside code is a Markdown escape: keep it as written (Morpion's "\" line).
    parts = CODE.split(text)
    return "".join(p if i % 2 else p.replace("\\", "\\\\") for i, p in enumerate(parts))


def kwargs_text(kwargs: dict) -> str:
    return ", ".join(f"`{k}={v!r}`" for k, v in kwargs.items()) or "none"


def env_page(env_id: str, entry_point: str, kwargs: dict, picture: dict | None) -> str:
    """The Markdown page of one id."""
    from mc_envs.registry import GAMES

    cls = env_class(entry_point)
    doc = inspect.cleandoc(cls.__doc__ or "")
    summary, _, body = doc.partition("\n")
    games = [g for g in GAMES if g.env_id == env_id]
    names = ", ".join(f"`{g.name}`" + (f" ({kwargs_text(g.cli)})" if g.cli else "") for g in games)
    aliases = ", ".join(f"`{a}`" for g in games for a in g.aliases) or "none"
    players = games[0].players
    parameters = list(inspect.signature(cls.__init__).parameters.values())[1:]
    defaults = ", ".join(f"`{p.name}={p.default!r}`" for p in parameters)
    lines = [f"# {slug(env_id)}", ""]
    if picture is not None:
        lines += [
            f"```{{figure}} ../pictures/{picture['picture']}",
            f":alt: {slug(env_id)}, a finished game",
            "",
            f"{picture['caption']} (drawn by `render`, `docs/make_pictures.py`).",
            "```",
            "",
        ]
    lines += [
        to_myst(summary),
        "",
        "| | |",
        "|---|---|",
        f"| id | `{env_id}` |",
        f"| registered kwargs | {kwargs_text(kwargs)} |",
        f"| class | `{entry_point}` |",
        f"| players | {players} |",
        f"| default playout policy | `{getattr(cls, 'default_policy', 'random')}` |",
        f"| command-line name | {names} (aliases: {aliases}) |",
        "",
        "```python",
        "import gymnasium as gym",
        "import mc_envs  # registers the ids",
        "",
        f'env = gym.make("{env_id}")',
        "```",
        "",
        f"`{cls.__name__}`'s keyword arguments and their defaults: {defaults}.",
        "",
        to_myst(inspect.cleandoc(body)),
        "",
    ]
    return "\n".join(lines)


def index_page(ids: list[str], pictures: dict) -> str:
    lines = [
        "# Environments",
        "",
        "One page per registered id, written when the site is built from the env class's "
        "docstring (Gymnasium's sections), with a finished game drawn by the package's own "
        "renderer. `import mc_envs` registers them all; `gym.make(id, **kwargs)` makes one and "
        "`gym.make_vec(id, num_envs=N)` a compiled batch of them.",
        "",
        "| id | game |",
        "|---|---|",
    ]
    from mc_envs.registry import ENVS

    for env_id in ids:
        doc = inspect.cleandoc(env_class(ENVS[env_id][0]).__doc__ or "")
        lines.append(f"| [`{env_id}`]({slug(env_id)}.md) | {to_myst(doc.partition(chr(10))[0])} |")
    lines += ["", "```{toctree}", ":hidden:", ""] + [slug(i) for i in ids] + ["```", ""]
    return "\n".join(lines)


def write_if_changed(path: Path, text: str) -> None:
    if not path.exists() or path.read_text() != text:
        path.write_text(text)


def generate(app: Any) -> None:
    from mc_envs.registry import ENVS

    src = Path(app.srcdir)
    out = src / "envs"
    out.mkdir(exist_ok=True)
    index = src / "pictures" / "pictures.json"
    pictures = json.loads(index.read_text()) if index.exists() else {}
    for env_id, (entry_point, kwargs) in ENVS.items():
        picture = pictures.get(env_id)
        if picture is None or not (src / "pictures" / picture["picture"]).exists():
            logger.warning(f"{env_id} has no picture: run docs/make_pictures.py {env_id}")
            picture = None
        page = env_page(env_id, entry_point, kwargs, picture)
        write_if_changed(out / f"{slug(env_id)}.md", page)
    write_if_changed(out / "index.md", index_page(list(ENVS), pictures))
    for stale in out.glob("*.md"):
        if stale.stem != "index" and f"mc_envs/{stale.stem}" not in ENVS:
            stale.unlink()


def setup(app: Any) -> dict:
    app.connect("builder-inited", generate)
    return {"version": "1", "parallel_read_safe": True}
