"""Agent specs: one parser for the names that play, arena, the terminal and ``opponent=`` accept.

A spec is ``"random"``, ``"uct"``, ``"puct"``, ``"uct-<preset>"`` or ``"puct-<preset>"`` (a named
difficulty of :data:`mc_envs.agents.mcts.presets.PRESETS`: beginner, easy, medium, hard, expert, master), or
``"puct-heuristic"`` (PUCT with Connect Four's heuristic prior), or ``"alphazero"`` (PUCT with the
shipped Connect Four network, :mod:`mc_envs.agents.alphazero`, 200 simulations a move). ``"uct"`` and
``"puct"`` alone are the ``medium`` difficulty. A named agent that is a full set of keywords (as
``"uct-go"``) is a line of :data:`mc_envs.agents.mcts.presets.SPEC_PRESETS`.

Options: ``random``, ``uct`` and ``puct`` specs (presets included) take keyword options after a
colon, ``"uct:iterations=3000,policy=eye,reuse=false"`` or ``"uct-hard:c=0.5"``: each
``key=value`` is a keyword of the agent's constructor (read from its signature, so a keyword an
agent gains is an option at once), the value read as ``true``/``false``, ``none``, an int, a
float, or else text. They override the preset and the caller's budget (``--iterations``). An
unknown key, or a value of the wrong type for the constructor's annotation, raises
``ValueError`` naming the key and the keywords the agent takes.

Go also takes any GTP engine: ``"gtp:<command line>"``, e.g. ``"gtp:/usr/games/gnugo --mode gtp
--level 10"`` (:class:`mc_envs.agents.gtp_player.GtpPlayer`: the program is started at its first
move, without a shell, and ended when the agent is closed or collected; a time budget becomes its
``time_settings``, an iteration budget is ignored; ``resign`` makes it pass for the rest of the
game). Anything else raises ``ValueError`` naming the known specs.

:func:`register_opponents` puts every spec into :mod:`mc_envs.opponents`, where the envs'
``opponent=`` and the play window find them by name: :mod:`mc_envs.agents` calls it when imported,
and the entry point ``mc_envs.opponents`` of this distribution names it for a program that never
imports the agents.
"""

from __future__ import annotations

import inspect

from mc_envs import opponents
from mc_envs.agents.mcts.presets import PRESETS, SPEC_PRESETS, OptionValue
from mc_envs.opponents import Player

KINDS = ("random", "uct", "puct")
PRIORS = ("heuristic",)
GTP = "gtp:"
OPTIONS = ":"  # between a spec's name and its options
_WORDS = {"true": True, "false": False, "none": None, "null": None}
_TYPES: dict[str, tuple[type, ...]] = {
    "int": (int,),
    "float": (int, float),
    "bool": (bool,),
    "str": (str,),
    "None": (type(None),),
}


def known() -> list[str]:
    """Every spec :func:`parse` accepts (``<options>``: ``key=value,...``)."""
    tree = [f"{kind}{suffix}" for kind in KINDS[1:] for suffix in ["", *(f"-{p}" for p in PRESETS)]]
    named = [name for name in SPEC_PRESETS if name not in tree]
    options = [f"{kind}{OPTIONS}<options>" for kind in KINDS]
    return ["random", *tree, *named, *(f"puct-{p}" for p in PRIORS), *options, "alphazero",
            "gtp:<command line>"]  # fmt: skip


def parse(
    spec: str, *, seed: int = 0, iterations: int | None = None, time_limit: float | None = None
) -> Player:
    """The agent (with ``act(env)``) of a spec.

    Args:
        spec: see the module docstring (the name is case-insensitive, the options' values not).
        seed: the agent's seed.
        iterations, time_limit: a budget per move for the tree searches, replacing the preset's
            (the spec's own options win over both).

    Raises:
        ValueError: an unknown spec, naming the known ones; an unknown option or a bad value,
            naming the keywords the agent takes.
    """
    if str(spec).startswith(GTP):
        from mc_envs.agents.gtp_player import GtpPlayer

        return GtpPlayer(str(spec)[len(GTP) :], time_limit=time_limit)
    name, _, options = str(spec).partition(OPTIONS)
    name = name.strip().lower()
    if name == "alphazero" and not options:
        from mc_envs.agents.alphazero import alphazero_agent, shipped_model

        sims = iterations if iterations is not None else 200
        return alphazero_agent(shipped_model(), sims=sims, seed=seed, time_limit=time_limit)
    cls, kwargs = _base(name, spec, seed, iterations, time_limit)
    kwargs.update(parse_options(options, cls, name))
    try:
        return cls(**kwargs)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"agent {spec!r}: {exc}") from None


def _base(
    name: str, spec: str, seed: int, iterations: int | None, time_limit: float | None
) -> tuple[type, dict[str, object]]:
    """The class and keywords of a spec's name (before its options)."""
    from mc_envs.agents.mcts.puct import PUCT
    from mc_envs.agents.mcts.uct import UCT
    from mc_envs.agents.random_agent import RandomAgent

    kind, _, option = name.partition("-")
    if kind not in KINDS or (
        option
        and name not in SPEC_PRESETS
        and (
            kind == "random"
            or (option not in PRESETS and not (kind == "puct" and option in PRIORS))
        )
    ):
        raise ValueError(f"unknown agent {spec!r}; use one of {known()}")
    if kind == "random":
        return RandomAgent, {"seed": seed}
    kwargs: dict[str, object] = {"seed": seed, "iterations": PRESETS.get(option, PRESETS["medium"])}
    kwargs.update(SPEC_PRESETS.get(name, {}))
    if option in PRIORS:
        from mc_envs.agents.mcts.puct import connect_four_prior

        kwargs["prior"] = connect_four_prior
    if iterations is not None or time_limit is not None:
        kwargs["iterations"], kwargs["time_limit"] = iterations, time_limit
    return (UCT if kind == "uct" else PUCT if kind == "puct" else RandomAgent), kwargs


def parse_options(text: str, cls: type, name: str = "") -> dict[str, OptionValue]:
    """The keyword options ``key=value,...`` of a spec, checked against ``cls``'s constructor.

    Args:
        text: the options (empty: none).
        cls: the agent's class; its ``__init__`` signature says which keys exist and, through the
            annotations, which types their values may have.
        name: the spec's name, for messages.

    Raises:
        ValueError: a part without ``=``, a key given twice, an unknown key (naming the keywords
            the agent takes), or a value whose type the annotation excludes.
    """
    params = {
        p.name: p
        for p in inspect.signature(cls).parameters.values()
        if p.kind in (p.KEYWORD_ONLY, p.POSITIONAL_OR_KEYWORD)
    }
    out: dict[str, OptionValue] = {}
    for part in filter(None, (p.strip() for p in text.split(","))):
        key, eq, raw = (x.strip() for x in part.partition("="))
        if not eq or not key:
            raise ValueError(f"agent {name!r}: option {part!r} is not key=value")
        if key not in params:
            raise ValueError(
                f"agent {name!r}: unknown option {key!r}; {cls.__name__} takes {sorted(params)}"
            )
        if key in out:
            raise ValueError(f"agent {name!r}: option {key!r} given twice")
        out[key] = _checked(key, option_value(raw), params[key], name)
    return out


def option_value(text: str) -> OptionValue:
    """An option's value: ``true``/``false``, ``none``/``null``, an int, a float, else the text."""
    if text.lower() in _WORDS:
        return _WORDS[text.lower()]
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text


def _checked(key: str, value: OptionValue, param: inspect.Parameter, name: str) -> OptionValue:
    """The value if the parameter's annotation (or, without one, its default's type) allows it;
    an int given for a float becomes a float. Annotations beyond ``int float bool str None``
    (a callable, a class) accept any value: the constructor judges."""
    annotation = param.annotation
    if annotation is inspect.Parameter.empty:
        default = param.default
        annotation = "" if default in (None, inspect.Parameter.empty) else type(default).__name__
    words = [w.strip() for w in str(annotation).split("|")] if annotation else []
    if not words or not all(w in _TYPES for w in words):
        return value
    allowed = tuple(t for w in words for t in _TYPES[w])
    if isinstance(value, bool) and bool not in allowed:
        allowed = ()
    if not isinstance(value, allowed):
        raise ValueError(f"agent {name!r}: option {key}={value!r} is not {' | '.join(words)}")
    return float(value) if "float" in words and isinstance(value, int) else value


def _player(spec: str, *, seed: int) -> Player:
    return parse(spec, seed=seed)


def register_opponents() -> None:
    """Registers every spec of :func:`known` in :mod:`mc_envs.opponents` (``gtp:`` as a prefix,
    and every agent name with options, ``uct-hard:``, as a prefix)."""
    for name in known():
        if name.startswith(GTP):
            opponents.register(GTP, _player)
            continue
        head, sep, _ = name.partition(OPTIONS)
        opponents.register(head + sep if sep else name, _player)
        if not sep and name != "alphazero":
            opponents.register(name + OPTIONS, _player)
