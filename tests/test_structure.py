"""The structure rules of design.md sections 1 and 8, checked on the source: no import cycles and
no import against the layers (a lazy import counts for both), no module over 500 lines, no free
names in the search templates."""

from __future__ import annotations

import ast
import importlib
import re
from pathlib import Path

import numpy as np
import pytest

from mc_envs.kernel import k_legal  # the placeholder that _template's instances rebind

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("mc_envs",)
MAX_LINES = 500


def _modules() -> dict[str, Path]:
    found = {}
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            parts = list(path.relative_to(ROOT).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts = parts[:-1]
            found[".".join(parts)] = path
    return found


def _import_sites(name: str, path: Path, known: set[str]) -> list[tuple[str, tuple[str, ...]]]:
    """The project modules that ``name`` imports anywhere in its body (lazy imports too), each with
    the names of the functions the import statement sits in (empty at module top)."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    out = []

    def visit(node: ast.AST, within: tuple[str, ...]) -> None:
        targets = []
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")
                anchor = anchor[: len(anchor) - node.level + 1]
                base = ".".join([*anchor, base]) if base else ".".join(anchor)
            targets = [f"{base}.{alias.name}" for alias in node.names] + [base]
        for target in targets:
            while target and target not in known:
                target = target.rpartition(".")[0]
            if target and target != name:
                out.append((target, within))
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            within = (*within, node.name)
        for child in ast.iter_child_nodes(node):
            visit(child, within)

    visit(ast.parse(path.read_text()), ())
    return out


def _imports(name: str, path: Path, known: set[str]) -> set[str]:
    """The project modules that ``name`` imports anywhere in its body (lazy imports too)."""
    return {target for target, _ in _import_sites(name, path, known)}


def import_graph() -> dict[str, set[str]]:
    """Module -> the project modules it imports (a package's ``__init__`` is the package)."""
    modules = _modules()
    known = set(modules)
    return {name: _imports(name, path, known) for name, path in modules.items()}


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import cycle of the graph, or None."""
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return [*stack[stack.index(nxt) :], nxt]
            if nxt not in state:
                found = visit(nxt)
                if found:
                    return found
        stack.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state:
            found = visit(node)
            if found:
                return found
    return None


def test_the_cycle_finder_finds_a_cycle() -> None:
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set()}) is None


def test_no_import_cycles() -> None:
    cycle = find_cycle(import_graph())
    assert cycle is None, "import cycle: " + " -> ".join(cycle or [])


# The arrows of design.md section 1 as layers, lowest first (docs/contributing.md has the same
# table): a module imports its own layer and the layers of a lower rank, never one above or beside
# it, lazily or not. render and agents share a rank and import neither each other: the planners
# reach the envs and the play window from above, through mc_envs.opponents (filled by
# mc_envs.agents) or as objects the CLI hands them. One exception, Gymnasium's way with pygame:
# a module under render may import the package mc_envs.render inside a render() or close().
LAYERS: tuple[tuple[int, str, tuple[str, ...]], ...] = (
    (0, "base", ("_numba", "_version", "contract", "core", "extras", "kernel", "rng", "spaces")),
    (0, "base", ("exercise", "interpret", "search_hooks", "spawning", "state", "wishes")),
    (1, "games", ("games",)),
    (
        2,
        "envs",
        ("", "envs", "go_sgf", "morpion_records", "opponents", "pettingzoo", "records"),
    ),
    (2, "envs", ("registry", "testing", "vector")),
    (3, "render", ("render",)),
    (3, "agents", ("agents",)),
    (4, "cli", ("cli",)),
)
DRAWING_CALLS = ("render", "close")


def layer_of(module: str) -> tuple[int, str]:
    """The rank and name of a module's layer (the longest prefix of the table that it starts)."""
    best: tuple[int, int, str] | None = None
    for rank, layer, prefixes in LAYERS:
        for prefix in prefixes:
            full = f"mc_envs.{prefix}" if prefix else "mc_envs"
            exact = not prefix  # the package mc_envs itself, not everything under it
            inside = module == full or (not exact and module.startswith(full + "."))
            if inside and (best is None or len(full) > best[0]):
                best = (len(full), rank, layer)
    if best is None:
        raise KeyError(f"{module} is in no layer of tests/test_structure.py's LAYERS: add it")
    return best[1], best[2]


def layer_violations(sites: dict[str, list[tuple[str, tuple[str, ...]]]]) -> list[str]:
    """Each import (module -> the modules it imports, with the functions each import sits in)
    that goes up or sideways in :data:`LAYERS`."""
    wrong = []
    for module, imports in sorted(sites.items()):
        rank, layer = layer_of(module)
        for target, within in sorted(set(imports)):
            to_rank, to_layer = layer_of(target)
            if to_layer == layer or to_rank < rank:
                continue
            drawing = to_layer == "render" and rank < to_rank
            if drawing and target == "mc_envs.render" and set(within) & set(DRAWING_CALLS):
                continue
            where = f" (inside {'.'.join(within)})" if within else ""
            wrong.append(f"{module} ({layer}) -> {target} ({to_layer}){where}")
    return wrong


def test_the_layer_check_finds_an_upward_import() -> None:
    sites = {
        "mc_envs.envs.x": [("mc_envs.agents.specs", ("_make",)), ("mc_envs.games.x", ())],
        "mc_envs.core": [("mc_envs.render", ("PlanningEnv", "render"))],
        "mc_envs.render.play": [("mc_envs.agents", ())],
        "mc_envs.agents.x": [("mc_envs.render", ("render",)), ("mc_envs.envs.x", ())],
        "mc_envs.cli": [("mc_envs.agents", ()), ("mc_envs.render.play", ())],
    }
    assert layer_violations(sites) == [
        "mc_envs.agents.x (agents) -> mc_envs.render (render) (inside render)",
        "mc_envs.envs.x (envs) -> mc_envs.agents.specs (agents) (inside _make)",
        "mc_envs.render.play (render) -> mc_envs.agents (agents)",
    ]  # core's render() may draw; agents, beside render, may not, not even inside a render()
    assert layer_of("mc_envs") == (2, "envs") and layer_of("mc_envs.core") == (0, "base")


def test_the_layers_import_downward_only() -> None:
    modules = _modules()
    known = set(modules)
    sites = {name: _import_sites(name, path, known) for name, path in modules.items()}
    wrong = layer_violations(sites)
    assert not wrong, "imports against the layers (docs/contributing.md):\n" + "\n".join(wrong)


def test_contributing_shows_the_layer_table_and_names_only_files_that_exist() -> None:
    text = (ROOT / "docs" / "contributing.md").read_text()
    rows = re.findall(r"^\| (\d) \| (\w+) \| ([^|]+) \|", text, flags=re.MULTILINE)
    shown = {
        (int(rank), layer, name.rstrip("/").replace("mc_envs", ""))
        for rank, layer, cell in rows
        for name in re.findall(r"`([^`]+)`", cell)
    }
    table = {(rank, layer, name) for rank, layer, names in LAYERS for name in names}
    assert shown == table, f"docs/contributing.md's layers differ: {shown ^ table}"
    named = set(re.findall(r"`((?:mc_envs|tests|docs|benchmarks|agents|render)/[\w/.]+)`", text))
    missing = [
        path
        for path in sorted(named)
        if not (ROOT / path).exists() and not (ROOT / "mc_envs" / path).exists()
    ]
    assert not missing, f"docs/contributing.md names files that do not exist: {missing}"


@pytest.mark.parametrize("name", sorted(_modules()))
def test_no_module_over_500_lines(name: str) -> None:
    lines = len(_modules()[name].read_text().splitlines())
    assert lines <= MAX_LINES, f"{name} has {lines} lines"


def test_no_free_names_in_templates() -> None:
    offenders = [
        f"{path.relative_to(ROOT)}:{i}"
        for path in _modules().values()
        for i, line in enumerate(path.read_text().splitlines(), 1)
        if "noqa: F821" in line
    ]
    assert not offenders, offenders


def test_agents_are_grouped_by_family() -> None:
    flat = sorted(p.stem for p in (ROOT / "mc_envs" / "agents").glob("*.py"))
    assert len(flat) <= 10, flat  # the shared modules; the families are subpackages
    from mc_envs.agents import NMCS, NRPA, PUCT, UCT  # noqa: F401  (the public door)


def test_the_modules_left_out_of_the_cache_key_compile_nothing_and_feed_no_kernel() -> None:
    """mc_envs._numba keys the numba cache on every module but NOT_COMPILED: those must define no
    compiled code, and no module in the key may take a number from them,
    since compiled code freezes the numbers it reads."""
    from mc_envs._numba import NOT_COMPILED, compiled_sources

    keyed = {path.resolve() for path in compiled_sources()}
    modules = _modules()
    left_out = {name for name, path in modules.items() if path.resolve() not in keyed}
    assert "mc_envs.render" in left_out and "mc_envs.games.go" not in left_out
    markers = ("njit", "prange", "instantiate(", "@numba", "numba.jit")
    compiling = [n for n in sorted(left_out) if any(m in modules[n].read_text() for m in markers)]
    assert not compiling, f"modules left out of the cache key ({NOT_COMPILED}) compile: {compiling}"
    feeding = []
    for name, path in modules.items():
        if name in left_out:
            continue
        for node in ast.parse(path.read_text()).body:  # module globals: what kernels read
            if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module in left_out:
                source = importlib.import_module(node.module)
                feeding += [
                    f"{name}: {node.module}.{a.name}"
                    for a in node.names
                    if isinstance(getattr(source, a.name), (int, float, np.number))
                ]
    assert not feeding, (
        f"modules in the cache key take constants from modules outside it: {feeding}"
    )


MAX_FUNCTION_LINES = 60
# The compiled kernels and templates allowed over MAX_FUNCTION_LINES, each with the reason; each
# must also say why in a comment right above its definition (its decorators included).
LONG_KERNELS = {
    "mc_envs/games/samegame_bits.py:playout": "the hot playout; its buffers' slices stay in locals",
    "mc_envs/games/morpion.py:_apply": "runs at every move of every playout, one set of locals",
    "mc_envs/agents/nested/nmcs.py:_nmcs": "the per-game NMCS template; its loop state in locals",
    "mc_envs/games/connect_four_solve.py:negamax": "the solver's recursive alpha-beta node",
    "mc_envs/games/sudoku_solve.py:dfs": "the solver's depth-first loop, one set of locals",
    "mc_envs/agents/nested/nrpa_core.py:_adapt": "the per-game NRPA adaptation; hot path",
    "mc_envs/vector/compiled.py:_range": "the vector step; helpers cost compile time and speed",
}


def long_functions(path: Path) -> list[tuple[str, int, bool]]:
    """The functions of ``path`` over MAX_FUNCTION_LINES lines: (name, length, whether a comment
    block sits right above the definition and its decorators)."""
    lines = path.read_text().splitlines()
    out = []
    for node in ast.walk(ast.parse("\n".join(lines))):
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        length = (node.end_lineno or node.lineno) - node.lineno + 1
        if length <= MAX_FUNCTION_LINES:
            continue
        top = min([node.lineno, *(d.lineno for d in node.decorator_list)])
        commented = top >= 2 and lines[top - 2].lstrip().startswith("#")
        out.append((node.name, length, commented))
    return out


def test_the_length_check_finds_a_long_function(tmp_path: Path) -> None:
    body = "\n".join(f"    x{i} = {i}" for i in range(MAX_FUNCTION_LINES))
    path = tmp_path / "m.py"
    path.write_text(f"# why\n@dec\ndef long():\n{body}\n\n\ndef short():\n    pass\n")
    assert long_functions(path) == [("long", MAX_FUNCTION_LINES + 1, True)]


def test_functions_are_at_most_60_lines_except_commented_compiled_kernels() -> None:
    found = {}
    for path in _modules().values():
        for name, length, commented in long_functions(path):
            found[f"{path.relative_to(ROOT).as_posix()}:{name}"] = (length, commented)
    unlisted = {key: length for key, (length, _) in found.items() if key not in LONG_KERNELS}
    assert not unlisted, f"functions over {MAX_FUNCTION_LINES} lines: {unlisted}"
    silent = [key for key, (_, commented) in found.items() if not commented]
    assert not silent, f"long kernels without a comment above saying why: {silent}"


def _template(state):  # pragma: no cover (compiled; the memo test only instantiates it)
    return k_legal(state)


def test_instantiate_makes_each_instance_once() -> None:
    from mc_envs._numba import instantiate
    from mc_envs.kernel import keep_all, never_truncated

    one = instantiate(_template, "memo_test", k_legal=keep_all, unread=1)
    assert instantiate(_template, "memo_test", k_legal=keep_all, unread=2) is one  # not read
    assert instantiate(_template, "memo_test", k_legal=never_truncated) is not one
    assert instantiate(_template, "memo_test_2", k_legal=keep_all) is not one
    assert instantiate(_template, "memo_test", inline=True, k_legal=keep_all) is not one


def test_one_kernel_binding_table_for_every_compiled_template() -> None:
    from mc_envs.agents.mcts.puct_batch_core import batch_kernels
    from mc_envs.agents.ops import compiled_ops
    from mc_envs.games.connect_four import KERNEL as C4
    from mc_envs.kernel import no_bias, player_zero, zero_return
    from mc_envs.vector.compiled import parallel_entry, serial_entry

    assert C4.bindings is C4.bindings
    assert C4.bindings.TWO_PLAYER and C4.bindings.k_player is C4.player
    assert C4.bindings.k_legal is C4.legal and C4.bindings.k_bias is no_bias
    import gymnasium as gym

    same = gym.make("mc_envs/SameGame-v0").unwrapped.kernel.bindings
    assert not same.TWO_PLAYER and same.k_player is player_zero and same.k_returns is zero_return
    assert compiled_ops(C4)["legal"] is compiled_ops(C4)["legal"]
    assert batch_kernels(C4) == batch_kernels(C4)
    assert serial_entry(C4) is serial_entry(C4) and parallel_entry(C4) is parallel_entry(C4)
