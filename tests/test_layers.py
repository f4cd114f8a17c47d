"""The layering stays true: no import cycle, and no module imports from a layer above its own.

Every ``import`` in every module of the ``bspatial`` namespace counts, function-level imports and
``TYPE_CHECKING`` blocks included (a deferred import is still a dependency). Layers, bottom first (the
README's Layout section says what each holds):

    foundation  bspatial (the version), bspatial.common, bspatial.catalog, bspatial.citation, bspatial.reference
    scoring     bspatial.scoring
    world       bspatial.world
    sim         bspatial.sim
    tasks       bspatial.tasks
    construction bspatial.construction
    modeling    bspatial.modeling
    evaluation  bspatial.evaluation
    entry points bspatial.cli, bspatial.hub, bspatial.demo

Inside ``construction`` and ``evaluation`` the sub-packages are layered the same way (:data:`SUBLAYERS`).

The ``evaluate`` modules in ``metrics/`` may import only the foundation and scoring.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
FOLDERS = {"bspatial": ROOT / "bspatial", "bspatial.modeling": ROOT / "modeling", "bspatial.evaluation": ROOT / "evaluation"}
LAYERS: tuple[tuple[str, ...], ...] = (
    ("bspatial", "bspatial.common", "bspatial.catalog", "bspatial.citation", "bspatial.reference"),
    ("bspatial.scoring",),
    ("bspatial.world",),
    ("bspatial.sim",),
    ("bspatial.tasks",),
    ("bspatial.construction",),
    ("bspatial.modeling",),
    ("bspatial.evaluation",),
    ("bspatial.cli", "bspatial.hub", "bspatial.demo"),
)
METRICS_MAX_LAYER = 1  # scoring


def _modules() -> dict[str, Path]:
    found = {}
    for prefix, folder in FOLDERS.items():
        for path in folder.rglob("*.py"):
            parts = list(path.relative_to(folder).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts = parts[:-1]
            found[".".join([prefix, *parts])] = path
    return found


MODULES = _modules()


def _resolve(name: str) -> str | None:
    """The module of ours that ``name`` (a module or a name inside one) lives in, or None if it is not ours."""
    while name and name not in MODULES:
        name = name.rpartition(".")[0]
    return name or None


def imported_modules(module: str, path: Path) -> set[str]:
    """Our modules that ``module`` imports anywhere in its source (relative imports resolved)."""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                source = ".".join(base + ([node.module] if node.module else []))
            else:
                source = node.module or ""
            names = [source] + [f"{source}.{alias.name}" for alias in node.names]
        else:
            continue
        out |= {m for m in map(_resolve, names) if m is not None and m != module}
    return out


def layer_of(module: str) -> int:
    best = None
    for index, prefixes in enumerate(LAYERS):
        for prefix in prefixes:
            if module == prefix or module.startswith(prefix + "."):
                if best is None or len(prefix) > len(best[1]):
                    best = (index, prefix)
    if best is None:
        raise AssertionError(f"module {module} belongs to no layer: add it to LAYERS (and to the README's Layout)")
    return best[0]


def find_cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles = []
    counter = 0
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is None:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        cycles.append(sorted(component))
            elif child not in index:
                index[child] = low[child] = counter
                counter += 1
                stack.append(child)
                on_stack.add(child)
                work.append((child, iter(sorted(graph.get(child, ())))))
            elif child in on_stack:
                low[node] = min(low[node], index[child])
    return cycles


@pytest.fixture(scope="module")
def graph() -> dict[str, set[str]]:
    return {module: imported_modules(module, path) for module, path in MODULES.items()}


def test_the_walker_sees_function_level_and_relative_imports():
    # A negative control for the walker itself: a cycle and an upward import hidden in a function body.
    assert find_cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert find_cycles({"a": {"b"}, "b": set()}) == []
    # construction.demonstrations.budgets imports the episode loop only inside calibrate's helpers.
    edges = imported_modules("bspatial.construction.demonstrations.budgets", MODULES["bspatial.construction.demonstrations.budgets"])
    assert "bspatial.tasks.episode" in edges
    train = imported_modules("bspatial.modeling.train", MODULES["bspatial.modeling.train"])
    assert "bspatial.modeling.training_data" in train   # a relative import, resolved
    assert layer_of("bspatial.sim.backend") < layer_of("bspatial.tasks.registry") < layer_of("bspatial.cli")
    assert layer_of("bspatial.catalog.tasks") == layer_of("bspatial") == 0


def test_no_import_cycles(graph):
    assert find_cycles(graph) == []


def test_no_module_imports_from_a_higher_layer(graph):
    upward = sorted(f"{m} (layer {layer_of(m)}) imports {t} (layer {layer_of(t)})"
                    for m, targets in graph.items() for t in targets if layer_of(t) > layer_of(m))
    assert upward == []


def test_metric_modules_import_only_scoring_and_the_foundation():
    for path in sorted((ROOT / "metrics").glob("*/*.py")):
        for target in imported_modules(f"metrics.{path.parent.name}.{path.stem}", path):
            assert layer_of(target) <= METRICS_MAX_LAYER, f"{path.relative_to(ROOT)} imports {target}"


def test_production_code_never_imports_test_helpers(graph):
    helpers = {"bspatial.modeling.testing_utils"}
    users = sorted(m for m, targets in graph.items() if targets & helpers)
    assert users == []


def _package_graph(graph: dict[str, set[str]], parent: str) -> dict[str, set[str]]:
    """Sub-package of ``parent`` -> the sub-packages its modules import (a module directly in ``parent`` is its own
    node): the layers inside a big folder, which the module graph's acyclicity alone does not order."""
    def node(module: str) -> str | None:
        if not module.startswith(parent + "."):
            return None
        return parent + "." + module[len(parent) + 1:].split(".")[0]

    packages: dict[str, set[str]] = {}
    for module, targets in graph.items():
        source = node(module)
        if source is not None:
            packages.setdefault(source, set()).update(t for t in map(node, targets) if t not in (None, source))
    return packages


# The layers inside the two big folders, bottom first: a sub-package (or a module directly in the folder) imports
# only from layers below its own, never a sibling of its layer nor one above. The README's Layout section says the
# same in words.
SUBLAYERS: dict[str, tuple[tuple[str, ...], ...]] = {
    "bspatial.evaluation": (
        ("vlm",),                               # VLM backends, runs, prompts, reports of one run
        ("rollout", "lmms_eval_tasks"),         # the rollout loop and its predictors; lmms-eval's task files
        ("envs", "serving", "agents"),          # gym/LeRobot envs, the openpi server, code-as-policy agents
        ("conformance", "analysis"),            # observation checks across paths; tables, joins, leaderboard, site
    ),
    "bspatial.construction": (
        ("items", "splits", "gallery"),         # records and frames; split manifests; the asset gallery
        ("quality",),                           # validity rules: report, audit, priors, prior-balanced sampling
        ("questions", "ir_labels"),             # VQA question generators; IR region labels
        ("publishing",),                        # presets, per-task records, export, cards: the build
        ("demonstrations",),                    # LeRobot demonstrations, context frames, step budgets
    ),
}


def sublayer_violations(packages: dict[str, set[str]], parent: str) -> list[str]:
    """Edges of ``packages`` (a :func:`_package_graph`) that do not point to a lower sub-layer of ``parent``, and
    sub-packages no sub-layer names."""
    rank = {f"{parent}.{name}": index for index, names in enumerate(SUBLAYERS[parent]) for name in names}
    problems = [f"{source} is in no sub-layer of {parent}: add it to SUBLAYERS (and to the README's Layout)"
                for source in sorted(packages) if source not in rank]
    problems += [f"{source} (sub-layer {rank[source]}) imports {target} (sub-layer {rank[target]})"
                 for source, targets in sorted(packages.items()) if source in rank
                 for target in sorted(targets) if target in rank and rank[target] >= rank[source]]
    return problems


def test_the_sublayer_check_catches_an_upward_and_a_sibling_import():
    # A negative control: rollout importing analysis (upward) and envs importing serving (a sibling) are both named.
    parent = "bspatial.evaluation"
    packages = {f"{parent}.rollout": {f"{parent}.vlm", f"{parent}.analysis"}, f"{parent}.vlm": set(),
                f"{parent}.analysis": set(), f"{parent}.envs": {f"{parent}.serving"}, f"{parent}.serving": set(),
                f"{parent}.newcomer": set()}
    assert sublayer_violations(packages, parent) == [
        "bspatial.evaluation.newcomer is in no sub-layer of bspatial.evaluation: add it to SUBLAYERS (and to the "
        "README's Layout)",
        "bspatial.evaluation.envs (sub-layer 2) imports bspatial.evaluation.serving (sub-layer 2)",
        "bspatial.evaluation.rollout (sub-layer 1) imports bspatial.evaluation.analysis (sub-layer 3)",
    ]


@pytest.mark.parametrize("parent", sorted(SUBLAYERS))
def test_the_big_folders_keep_their_sublayers(graph, parent):
    packages = _package_graph(graph, parent)
    assert find_cycles(packages) == []
    assert sublayer_violations(packages, parent) == []
