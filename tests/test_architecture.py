"""The package's structure (DESIGN.md "Layout" and "Dependency direction"), checked on the source.

* The static import graph of ``mus_env`` (every ``import`` statement, those inside functions too) has no
  cycle, and the rules modules import in one direction: ``actions`` owns the action id space and imports none
  of ``signals``, ``phases``, ``observation``; ``signals`` and ``phases`` import ``actions``, never ``observation``.
* No module of ``mus_env`` or ``agents`` imports another module's private name or reads another object's
  private attribute (``obj._x`` where ``obj`` is not ``self`` or ``cls``).
* The framework adapters live in ``mus_env.adapters``; the old paths are the same module objects; importing
  ``mus_env`` imports no framework.
* The kernel: every function has a docstring, the rule handlers name their RULES.md section, ``prange`` only
  runs over the tables; each of its four files holds its own part only and imports only the files before it
  (layout -> handlers -> view -> drivers).
"""

from __future__ import annotations

import ast
import importlib
import re
import subprocess
import sys
from pathlib import Path

import pytest
from hang_guards import PROCESS_S

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "mus_env"


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _modules(package: Path) -> dict[str, Path]:
    return {_module_name(p): p for p in sorted(package.rglob("*.py"))}


def _is_package(name: str, modules: dict[str, Path]) -> bool:
    return modules.get(name, Path()).name == "__init__.py"


def _imports(name: str, path: Path, modules: dict[str, Path]) -> set[str]:
    """The modules of the package that ``name`` imports anywhere in its source (functions included)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    base = name if _is_package(name, modules) else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                parent = base
                for _ in range(node.level - 1):
                    parent = parent.rpartition(".")[0]
                target = f"{parent}.{node.module}" if node.module else parent
            else:
                target = node.module or ""
            for a in node.names:                       # "from . import observation" imports the submodule
                found.add(f"{target}.{a.name}" if f"{target}.{a.name}" in modules else target)
    return {m for m in found if m in modules and m != name}


def _graph() -> dict[str, set[str]]:
    modules = _modules(PACKAGE)
    return {name: _imports(name, path, modules) for name, path in modules.items()}


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One cycle of ``graph`` as a path ``[a, b, ..., a]``, or None."""
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                return stack[stack.index(nxt):] + [nxt]
            if nxt not in state and (found := visit(nxt)):
                return found
        stack.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state and (found := visit(node)):
            return found
    return None


def test_the_checker_finds_imports_and_cycles() -> None:
    """The graph sees imports inside functions and relative imports of sibling modules, and reports a cycle."""
    graph = _graph()
    assert "mus_env.actions" in graph["mus_env.phases"]
    assert "mus_env.observation" in graph["mus_env.game"]                  # "from . import observation"
    assert "mus_env.vector" in graph["mus_env.adapters.sb3"]              # "from ..vector import ..."
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert _cycle({"a": {"b"}, "b": set()}) is None


def test_mus_env_import_graph_has_no_cycle() -> None:
    cycle = _cycle(_graph())
    assert cycle is None, "import cycle: " + " -> ".join(cycle or [])


def test_rules_modules_import_in_one_direction() -> None:
    graph = _graph()
    rules = {f"mus_env.{m}" for m in ("actions", "signals", "phases", "observation")}
    assert not graph["mus_env.actions"] & rules, graph["mus_env.actions"]
    for name in ("mus_env.signals", "mus_env.phases"):
        assert "mus_env.actions" in graph[name]
        assert "mus_env.observation" not in graph[name], name
    assert "mus_env.config" in graph["mus_env.actions"]


def test_moved_names_stay_importable_where_they_were() -> None:
    from mus_env import actions, config, interfaces, mus_v0, observation, signals, wrappers

    for name in ("Sign", "NUM_SIGNS", "SIGNAL_BASE", "SIGN_NAMES", "SIGN_WORDS", "num_actions", "is_sign_action",
                 "sign_of_action"):
        assert getattr(signals, name) is getattr(actions, name), name
    assert signals.signals_on is config.signals_on
    assert not hasattr(signals, "obs_dim") and not hasattr(observation, "obs_size")     # removed in 0.3
    for name in ("REWARD_MODES", "AGENTS", "observation_box", "state_box", "hand_stone_difference", "team_rewards",
                 "table_text", "make_config", "render_table", "deal_game"):
        assert getattr(mus_v0, name) is getattr(interfaces, name), name
    assert wrappers.REWARD_MODES is interfaces.REWARD_MODES


# ----------------------------------------------------------------------------------------------------------
# the wings of experiments/
#: Each wing of ``experiments/`` and its rank: a module may import a wing of a lower rank (and its own), never one
#: of the same or a higher rank, so no two wings import each other. ``cli`` is ``cli.py``, ``play.py``,
#: ``replay.py`` (the command line on top). A new wing must be ranked here (docs/architecture.md draws them).
WING_RANKS = {"evaluate": 0, "web": 1, "train": 1, "integrations": 2, "population": 2, "benchmark": 3, "tools": 4,
              "commands": 5, "cli": 6}


def _wing(module: str) -> str | None:
    parts = module.split(".")
    if len(parts) == 1:
        return None                                            # experiments/__init__.py: the moved paths only
    if len(parts) == 2 and parts[1] in ("cli", "play", "replay"):
        return "cli"
    return parts[1]


def _wing_violations(graph: dict[str, set[str]]) -> list[str]:
    bad = []
    for name, targets in sorted(graph.items()):
        here = _wing(name)
        for target in sorted(targets):
            there = _wing(target)
            if here is None or there is None or here == there:
                continue
            if here not in WING_RANKS or there not in WING_RANKS:
                bad.append(f"{name} -> {target}: wing {here if here not in WING_RANKS else there} is not ranked")
            elif WING_RANKS[there] >= WING_RANKS[here]:
                bad.append(f"{name} ({here}, rank {WING_RANKS[here]}) imports {target} ({there}, rank "
                           f"{WING_RANKS[there]})")
    return bad


def test_the_wing_checker_finds_an_upward_import() -> None:
    assert _wing_violations({"experiments.evaluate.x": {"experiments.train.ppo"}})         # evaluate -> train
    assert _wing_violations({"experiments.train.x": {"experiments.population.exploit"}})  # train -> population
    assert _wing_violations({"experiments.population.x": {"experiments.integrations.y"}})  # same rank
    assert _wing_violations({"experiments.newwing.x": {"experiments.evaluate.deals"}})     # not ranked
    assert not _wing_violations({"experiments.population.x": {"experiments.train.ppo", "experiments.evaluate.d"}})


def test_experiment_wings_import_in_one_direction() -> None:
    modules = _modules(ROOT / "experiments")
    graph = {name: _imports(name, path, modules) for name, path in modules.items()}
    assert "experiments.evaluate.deals" in graph["experiments.train.settings"]        # the checker sees them
    assert not _wing_violations(graph), "\n".join(_wing_violations(graph))
    wings = {_wing(m) for m in modules} - {None}
    assert wings == set(WING_RANKS), f"wings not ranked, or ranked and gone: {wings ^ set(WING_RANKS)}"


# ----------------------------------------------------------------------------------------------------------
# private names and private attributes
#: ``obj._x`` on an instance the class itself has just made: MusGame.from_deck builds the game it returns
#: (``cls.__new__(cls)``) and MusGame.clone copies itself (``copy.copy(self)``); both are MusGame's own code.
_OWN_NEW_INSTANCES = {("mus_env/game.py", "from_deck", "game"), ("mus_env/game.py", "clone", "g")}
#: The public methods of every namedtuple (named with an underscore so that no field can clash with them).
_NAMEDTUPLE_API = {"_replace", "_asdict", "_fields", "_make"}
#: Another library's internals, where it offers no public way (not our code's: ours offer public API instead).
#: OpenSpiel 2's PyTorch NFSP has no accessor for its networks, optimisers, buffers or step counters, and its
#: ``restore`` reads keys its ``save`` does not write: the benchmark's NFSP row shares the four players' networks
#: and checkpoints them through these fields (experiments/benchmark/row_openspiel.py's docstring).
_THIRD_PARTY_INTERNALS = {"experiments/benchmark/row_openspiel.py": {
    "_reservoir_buffer", "_replay_buffer_class", "_rl_agent", "_replay_buffer", "_avg_network", "_optimizer",
    "_q_network", "_target_q_network", "_iteration", "_sample_episode_policy"}}


def _private_uses(path: Path, rel: str | None = None) -> list[str]:
    """Every private name imported from another module, and every ``obj._x`` with ``obj`` not self/cls."""
    rel = rel or path.relative_to(ROOT).as_posix()
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = []

    def scan(node: ast.AST, func: str) -> None:
        for child in ast.iter_child_nodes(node):
            here = child.name if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)) else func
            if isinstance(child, ast.ImportFrom) and child.module != "__future__":
                found.extend(f"{rel}:{child.lineno} imports {a.name}" for a in child.names
                             if a.name.startswith("_") and not a.name.startswith("__"))
            if (isinstance(child, ast.Attribute) and child.attr.startswith("_") and not child.attr.startswith("__")
                    and not (isinstance(child.value, ast.Name) and child.value.id in ("self", "cls"))
                    and not (isinstance(child.value, ast.Call) and ast.unparse(child.value) == "super()")):
                owner = child.value.id if isinstance(child.value, ast.Name) else ast.unparse(child.value)
                if (rel, here, owner) not in _OWN_NEW_INSTANCES and child.attr not in _NAMEDTUPLE_API \
                        and child.attr not in _THIRD_PARTY_INTERNALS.get(rel, ()):
                    found.append(f"{rel}:{child.lineno} {owner}.{child.attr} (in {here})")
            scan(child, here)

    scan(tree, "<module>")
    return found


def test_the_private_use_checker_finds_them(tmp_path: Path) -> None:
    bad = tmp_path / "probe.py"
    bad.write_text("from .game import _sign_legal\n\n\ndef f(game, self):\n    return game._mano, self._ok, g._x\n")
    found = _private_uses(bad, "mus_env/probe.py")
    assert len(found) == 3 and "imports _sign_legal" in found[0] and "game._mano" in found[1], found
    assert len(_private_uses(bad, "mus_env/game.py")) == 3                 # the exemption is for two functions only


@pytest.mark.parametrize("package", ["mus_env", "agents"])
def test_no_private_names_or_attributes_of_others(package: str) -> None:
    found = [use for path in sorted((ROOT / package).rglob("*.py")) for use in _private_uses(path)]
    assert not found, "private names or attributes of another module or object:\n" + "\n".join(found)


# ----------------------------------------------------------------------------------------------------------
# the adapters subpackage and its old paths
@pytest.mark.parametrize(("name", "needs", "attr"), [("sb3", "stable_baselines3", "MusVecEnv"),
                                                     ("rllib", "ray.rllib", "MusMultiAgentEnv"),
                                                     ("tianshou", "tianshou", "MusTianshouEnv")])
def test_old_adapter_paths_are_the_same_modules(name: str, needs: str, attr: str,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip(needs)
    new = importlib.import_module(f"mus_env.adapters.{name}")
    old = importlib.import_module(f"mus_env.{name}")
    assert old is new and sys.modules[f"mus_env.{name}"] is new
    import mus_env
    assert getattr(mus_env, name) is new
    ns: dict = {}
    exec(f"from mus_env.{name} import {attr} as cls", ns)                  # the import statement users write
    assert ns["cls"] is getattr(new, attr)
    monkeypatch.setattr(old, "_PROBE", 7, raising=False)                   # patched through the old name
    assert new._PROBE == 7
    assert not (PACKAGE / f"{name}.py").exists()                           # a move leaves no file behind


#: Modules whose ``__getattr__`` imports on first use (no alias): the RL interfaces of ``mus_env``, torch of ``agents``.
LAZY_IMPORTS = ("mus_env/__init__.py", "agents/__init__.py")


def test_one_deprecation_mechanism() -> None:
    """Modules move only through :func:`mus_env.deprecation.register_moved`: no other module swaps
    ``sys.modules`` entries, installs an import hook or resolves names lazily as aliases."""
    offenders = []
    for path in sorted([*PACKAGE.rglob("*.py"), *(ROOT / "agents").rglob("*.py"),
                        *(ROOT / "experiments").rglob("*.py")]):
        rel = path.relative_to(ROOT).as_posix()
        if rel == "mus_env/deprecation.py":
            continue
        text = path.read_text(encoding="utf-8")
        for marker in ("sys.modules[__name__]", "MetaPathFinder", "meta_path"):
            if marker in text:
                offenders.append(f"{rel}: {marker}")
        if "def __getattr__" in text and rel not in LAZY_IMPORTS:
            offenders.append(f"{rel}: a module __getattr__")
    assert not offenders, offenders


def test_importing_mus_env_and_its_interfaces_imports_no_framework() -> None:
    code = ("import sys\nimport mus_env, mus_env.adapters, mus_env.interfaces, mus_env.wrappers, mus_env.vector\n"
            "bad = sorted(m for m in sys.modules if m.split('.')[0] in\n"
            "             ('stable_baselines3', 'sb3_contrib', 'ray', 'tianshou', 'torch', 'pettingzoo', 'pyspiel',\n"
            "              'open_spiel'))\n"
            "bad += [m for m in ('mus_env.adapters.sb3', 'mus_env.adapters.rllib', 'mus_env.adapters.tianshou',\n"
            "                    'mus_env.adapters.openspiel', 'mus_env.mus_v0') if m in sys.modules]\n"
            "print(bad)\nsys.exit(1 if bad else 0)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=PROCESS_S, cwd=ROOT)
    assert out.returncode == 0, f"imported: {out.stdout.strip()} {out.stderr[-2000:]}"


def test_interfaces_are_public_and_documented() -> None:
    from mus_env import interfaces

    for name in interfaces.__all__:
        obj = getattr(interfaces, name)
        assert not name.startswith("_")
        if callable(obj):
            assert (obj.__doc__ or "").strip(), f"interfaces.{name} has no docstring"


# ----------------------------------------------------------------------------------------------------------
# the kernel
#: The kernel's files in dependency order: each imports only the ones before it (mus_env/kernel/__init__.py).
KERNEL_MODULES = ("layout", "handlers", "view", "drivers", "cache")
KERNEL = PACKAGE / "kernel"


def _module_functions(path: Path) -> dict[str, ast.FunctionDef]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return {n.name: n for n in tree.body if isinstance(n, ast.FunctionDef)}


def _kernel_functions() -> dict[str, ast.FunctionDef]:
    """Every top-level function of the kernel's files (a name is defined once in the package)."""
    funcs: dict[str, ast.FunctionDef] = {}
    for module in KERNEL_MODULES:
        here = _module_functions(KERNEL / f"{module}.py")
        assert not here.keys() & funcs.keys(), f"defined twice in the kernel: {sorted(here.keys() & funcs.keys())}"
        funcs.update(here)
    return funcs


def test_every_kernel_function_has_a_docstring_and_handlers_name_their_rules() -> None:
    funcs = _kernel_functions()
    missing = [name for name, f in funcs.items() if not ast.get_docstring(f)]
    assert not missing, f"kernel functions without a docstring: {missing}"
    handlers = ["on_mus_call", "on_discard", "on_declare", "on_open", "on_respond", "on_confirm", "on_sign",
                "after_lance", "accept", "refuse", "add_stones", "do_showdown", "end_game", "serve_replacements",
                "reshuffle", "declare", "start_declared_lance", "bet", "raise_stake", "lance_winner", "next_hand"]
    for name in handlers:
        doc = ast.get_docstring(funcs[name])
        assert "RULES.md §" in doc and "MusGame." in doc, name
        args = [a.arg for a in funcs[name].args.args]
        assert "master" not in args and "b" not in args, (name, args)   # only the stepping loop resets a table


def test_prange_only_over_the_tables() -> None:
    uses = [name for name, f in _kernel_functions().items()
            if any(isinstance(n, ast.Name) and n.id == "prange" for n in ast.walk(f))]
    assert uses == ["step_parallel"], uses


#: The view's functions (mus_env/kernel/view.py), and nothing else there.
_VIEW_FUNCTIONS = {"encode", "sees_sign", "encode_signs", "write_mask", "is_illegal", "write_view"}


def _is_compiled(f: ast.FunctionDef) -> bool:
    return any("njit" in ast.unparse(d) for d in f.decorator_list)


def kernel_part_violations(files: dict[str, dict[str, ast.FunctionDef]]) -> list[str]:
    """Functions of the kernel in the wrong file: ``files`` maps each of :data:`KERNEL_MODULES` to its functions.
    layout holds no compiled function; handlers no entry point (``step_*``, ``*_tables``) and none of the view's;
    view exactly the view's functions; drivers no handler (``on_*``) and none of the view's."""
    bad = []
    for name, f in files["layout"].items():
        if _is_compiled(f):
            bad.append(f"layout.{name}: compiled code belongs in handlers, view or drivers")
    for name in files["handlers"]:
        if name.startswith(("step_", "encode", "write_", "observe")) or name.endswith("_tables") \
                or name in _VIEW_FUNCTIONS:
            bad.append(f"handlers.{name}: an entry point or the view's, not a rule handler")
    if set(files["view"]) != _VIEW_FUNCTIONS:
        bad.append(f"view: {sorted(set(files['view']) ^ _VIEW_FUNCTIONS)} (it holds exactly {sorted(_VIEW_FUNCTIONS)})")
    for name in files["drivers"]:
        if name.startswith("on_") or name in _VIEW_FUNCTIONS:
            bad.append(f"drivers.{name}: a handler or the view's, not an entry point")
    for name, f in files["cache"].items():
        if _is_compiled(f):
            bad.append(f"cache.{name}: the cache guard compiles nothing")
    return bad


def test_each_kernel_file_holds_its_own_part() -> None:
    """The split of the kernel stays a split: mus_env/kernel/ holds exactly the files of KERNEL_MODULES (and the
    package's __init__, which defines nothing), each with its own part only."""
    assert sorted(p.stem for p in KERNEL.glob("*.py")) == sorted([*KERNEL_MODULES, "__init__"])
    assert not _module_functions(KERNEL / "__init__.py"), "mus_env/kernel/__init__.py only re-exports"
    files = {m: _module_functions(KERNEL / f"{m}.py") for m in KERNEL_MODULES}
    assert {"make_rules", "on_mus_call", "encode", "step_serial"} <= {n for fs in files.values() for n in fs}
    bad = kernel_part_violations(files)
    assert not bad, "kernel functions in the wrong file:\n" + "\n".join(bad)


def test_the_kernel_part_checker_finds_a_misplaced_function() -> None:
    files = {m: _module_functions(KERNEL / f"{m}.py") for m in KERNEL_MODULES}
    assert not kernel_part_violations(files)
    moved = {**files, "handlers": {**files["handlers"], "step_serial": files["drivers"]["step_serial"]}}
    assert kernel_part_violations(moved) == ["handlers.step_serial: an entry point or the view's, not a rule handler"]
    moved = {**files, "drivers": {**files["drivers"], "on_sign": files["handlers"]["on_sign"]}}
    assert kernel_part_violations(moved) == ["drivers.on_sign: a handler or the view's, not an entry point"]


def test_kernel_files_import_in_dependency_order() -> None:
    """layout -> handlers -> view -> drivers: a kernel file imports only the kernel files before it (and the rules
    modules); the package's __init__ re-exports from them."""
    graph = _graph()
    for i, module in enumerate(KERNEL_MODULES):
        kernel_deps = {d for d in graph[f"mus_env.kernel.{module}"] if d.startswith("mus_env.kernel")}
        allowed = {f"mus_env.kernel.{m}" for m in KERNEL_MODULES[:i]}
        assert kernel_deps <= allowed, (module, sorted(kernel_deps - allowed))
        others = {d for d in graph[f"mus_env.kernel.{module}"] if not d.startswith("mus_env.kernel")}
        assert all(layer_of(d) in ("rules", "observation") for d in others), (module, sorted(others))
    assert "mus_env.kernel.handlers" in graph["mus_env.kernel.view"]            # the checker sees them
    assert graph["mus_env.kernel"] == {f"mus_env.kernel.{m}" for m in KERNEL_MODULES}


# ----------------------------------------------------------------------------------------------------------
# the whole project: mus_env, agents, experiments
#: Layers, bottom first (docs/architecture.md): a module may import its own layer and the layers below.
LAYERS = ("rules", "observation", "engines", "interfaces", "agents", "libraries", "cli")
_RULES = {f"mus_env.{m}" for m in ("config", "cards", "tables", "shuffle", "actions", "phases", "signals", "rows")}
_ENGINES = {"mus_env.game", "mus_env.kernel", *(f"mus_env.kernel.{m}" for m in KERNEL_MODULES), "mus_env.vector",
            "mus_env.records", "mus_env.interrupts"}
_CLI = {"experiments.cli", "experiments.play", "experiments.replay"}   # (experiments/__init__: the libraries' root)
#: Third-party packages that each layer may import (the standard library is always allowed).
_THIRD_PARTY = {"rules": {"numpy"}, "observation": {"numpy"}, "engines": {"numpy", "numba"}}


def layer_of(module: str) -> str:
    """The layer of a module of the project (see :data:`LAYERS`)."""
    if module in _RULES:
        return "rules"
    if module == "mus_env.observation":
        return "observation"
    if module in _ENGINES:
        return "engines"
    if module.split(".")[0] == "mus_env":
        return "interfaces"
    if module.split(".")[0] == "agents":
        return "agents"
    if module in _CLI or module.startswith("experiments.commands"):
        return "cli"
    return "libraries"


def _project_graph() -> dict[str, set[str]]:
    modules: dict[str, Path] = {}
    for package in ("mus_env", "agents", "experiments"):
        modules.update(_modules(ROOT / package))
    return {name: _imports(name, path, modules) for name, path in modules.items()}


def layer_violations(graph: dict[str, set[str]]) -> list[str]:
    """Every import of a module of a higher layer than the importer's."""
    rank = {name: i for i, name in enumerate(LAYERS)}
    return [f"{a} ({layer_of(a)}) imports {b} ({layer_of(b)})" for a, deps in sorted(graph.items())
            for b in sorted(deps) if rank[layer_of(b)] > rank[layer_of(a)]]


def _third_party(path: Path) -> set[str]:
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(a.name.split(".")[0] for a in node.names)
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
            found.add(node.module.split(".")[0])
    return {m for m in found if m not in sys.stdlib_module_names and m not in ("mus_env", "agents", "experiments")}


def test_the_layer_checker_finds_an_upward_import() -> None:
    graph = {"mus_env.game": {"mus_env.actions", "agents.rule"}, "experiments.evaluate.deals": {"experiments.cli"},
             "agents.rule": {"mus_env.observation"}}
    assert layer_violations(graph) == ["experiments.evaluate.deals (libraries) imports experiments.cli (cli)",
                                       "mus_env.game (engines) imports agents.rule (agents)"]
    assert layer_of("mus_env.adapters.sb3") == "interfaces" and layer_of("experiments.commands.train") == "cli"
    assert layer_of("experiments.train.ppo") == "libraries" and layer_of("mus_env.signals") == "rules"


def test_project_import_graph_has_no_cycle() -> None:
    cycle = _cycle(_project_graph())
    assert cycle is None, "import cycle: " + " -> ".join(cycle or [])


def test_every_import_points_down_the_layers() -> None:
    """Rules <- observation <- engines <- interfaces <- agents <- libraries <- the command line: an engine or a
    rules module never imports an adapter, an agent or an experiment, and a library never imports the CLI."""
    bad = layer_violations(_project_graph())
    assert not bad, "imports against the layers:\n" + "\n".join(bad)


def test_rules_and_engines_import_no_framework() -> None:
    """The rules, the observation and the engines import numpy (and numba for the kernel) only."""
    bad = []
    for name, path in sorted({**_modules(PACKAGE)}.items()):
        allowed = _THIRD_PARTY.get(layer_of(name))
        if allowed is not None and (extra := _third_party(path) - allowed):
            bad.append(f"{name} imports {sorted(extra)}")
    assert not bad, bad


def test_torch_is_imported_at_the_top_of_a_module_never_inside_a_function() -> None:
    bad = []
    for package in ("mus_env", "agents", "experiments"):
        for path in sorted((ROOT / package).rglob("*.py")):
            for fn in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    continue
                for node in ast.walk(fn):
                    names = ([a.name for a in node.names] if isinstance(node, ast.Import) else
                             [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
                    if any(n.split(".")[0] == "torch" for n in names):
                        bad.append(f"{path.relative_to(ROOT)}:{node.lineno} (in {fn.name})")
    assert not bad, "torch imported inside a function: " + ", ".join(bad)


def test_no_private_names_or_attributes_of_others_in_experiments() -> None:
    found = [use for path in sorted((ROOT / "experiments").rglob("*.py")) for use in _private_uses(path)]
    assert not found, "private names or attributes of another module or object:\n" + "\n".join(found)


def test_the_training_script_reads_in_one_sitting() -> None:
    """experiments/train/ppo.py, CleanRL-shaped: at most 650 lines, its docstring included (DESIGN.md); the loop's
    state is one typed TrainState, not attributes set on an untyped object."""
    script = (ROOT / "experiments" / "train" / "ppo.py").read_text(encoding="utf-8")
    assert len(script.splitlines()) <= 650, len(script.splitlines())
    assert "class Trainer" not in script and not re.search(r"\bt: Any\b", script)
    state = ast.parse((ROOT / "experiments" / "train" / "state.py").read_text(encoding="utf-8"))
    cls = next(n for n in state.body if isinstance(n, ast.ClassDef) and n.name == "TrainState")
    fields = [n.target.id for n in cls.body if isinstance(n, ast.AnnAssign)]
    assert {"net", "opt", "buffer", "league", "rng", "update", "history", "evals", "magnet", "exploiter"} <= set(fields)
    for module in ("checkpoint", "session", "report"):
        text = (ROOT / "experiments" / "train" / f"{module}.py").read_text(encoding="utf-8")
        assert not re.search(r"\bt: Any\b", text), module      # they read the TrainState through its fields
