"""The package's layers, as declared in the README, and that imports only go down them.

Each module of ``rbdyn`` belongs to one layer; a module may import from its own layer and the
layers below, never from a layer above (lazy imports inside functions count too: they are
dependencies all the same). Inside a layer, the modules import each other without a cycle. The
contract is read from the sources with :mod:`ast`, so it holds whether or not a module is ever
imported by a test.
"""

import ast
from pathlib import Path

import pytest

import rbdyn

PACKAGE = Path(rbdyn.__file__).resolve().parent

#: bottom-up; a module belongs to the first layer one of whose prefixes names it.
LAYERS = (
    ("foundation", ("rbdyn._errors", "rbdyn._stamp", "rbdyn._files", "rbdyn._validate", "rbdyn._compile")),
    ("rotations", ("rbdyn.so3",)),
    ("constraints", ("rbdyn.constraints",)),
    ("model", ("rbdyn.model",)),
    ("driver", ("rbdyn.driver",)),
    ("kernels", ("rbdyn.kernels",)),
    ("integrators", ("rbdyn.integrators",)),
    ("simulation", ("rbdyn.run_length", "rbdyn.simulation")),
    ("front", ("rbdyn.scenarios", "rbdyn.scenario_files", "rbdyn.studies", "rbdyn.plotting", "rbdyn.cli",
               "rbdyn._precompile", "rbdyn.__main__", "rbdyn")),
)
#: checking tools beside the stack: they use nothing of it (a reference must not come from the
#: code it checks).
APART = ("rbdyn.exact", "rbdyn.verify")
#: front modules that measure runs against the checking tools' references (a study's errors)
USES_APART = ("rbdyn.studies",)


def _module_name(path):
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _imports(path):
    """The rbdyn modules ``path`` imports, anywhere in it, with relative imports resolved."""
    name = _module_name(path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.level:
            base = package.split(".")[: len(package.split(".")) - node.level + 1]
            target = ".".join(base + ([node.module] if node.module else []))
            if node.module:
                found.add(target)
            else:
                found.update(f"{target}.{alias.name}" for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == "rbdyn":
            found.add(node.module)
        elif isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name.split(".")[0] == "rbdyn")
    return found


MODULES = {_module_name(p): _imports(p) for p in sorted(PACKAGE.rglob("*.py"))}


def _layer(name):
    """Index of the layer ``name`` (a module, or a name imported from one) belongs to, or
    ``None`` for the tools apart."""
    if any(name == a or name.startswith(a + ".") for a in APART):
        return None
    best = None
    for index, (_, prefixes) in enumerate(LAYERS):
        for prefix in prefixes:
            # the package itself ("rbdyn", its lazy namespace) names no module below it
            if name == prefix or (prefix != "rbdyn" and name.startswith(prefix + ".")):
                if best is None or len(prefix) > best[1]:
                    best = (index, len(prefix))
    assert best is not None, f"{name} belongs to no declared layer: add it to LAYERS"
    return best[0]


def _owner(name):
    """The module an imported dotted name refers to (``rbdyn.constraints.KINDS`` is a name in
    ``rbdyn.constraints``)."""
    while name not in MODULES:
        name = name.rpartition(".")[0]
    return name


def test_every_module_has_a_layer():
    for name in MODULES:
        _layer(name)


@pytest.mark.parametrize("name", sorted(MODULES))
def test_imports_go_down_the_layers(name):
    mine = _layer(name)
    for target in sorted(MODULES[name]):
        theirs = _layer(_owner(target))
        if mine is None:
            assert theirs is None or theirs == 0, f"{name} (apart from the stack) imports {target}"
        else:
            assert theirs is not None or any(name == u or name.startswith(u + ".") for u in USES_APART), \
                f"{name} imports the checking tool {target}"
            if theirs is None:
                continue
            assert theirs <= mine, (f"{name} (layer {LAYERS[mine][0]}) imports {target} "
                                    f"from the layer above, {LAYERS[theirs][0]}")


def test_no_import_cycle():
    graph = {name: {_owner(t) for t in targets} - {name} for name, targets in MODULES.items()}
    # a package's __init__ re-exports its modules; a module importing a name from its own
    # package is not a cycle through the package's other members, so drop those edges.
    for name, targets in graph.items():
        graph[name] = {t for t in targets if not (name.startswith(t + ".") and t != "rbdyn")}
    done, path = set(), []

    def visit(node):
        if node in path:
            raise AssertionError("import cycle: " + " -> ".join(path[path.index(node):] + [node]))
        if node in done:
            return
        path.append(node)
        for target in sorted(graph[node]):
            visit(target)
        path.pop()
        done.add(node)

    for name in sorted(graph):
        visit(name)
