"""rbdyn drops its on-disk compiled code when any of its sources changes.

numba checks a cached kernel against the kernel's own file only; a kernel that
links helpers of other files (the constraint kinds) would otherwise run code
compiled from an older rbdyn. :func:`rbdyn._jit._drop_stale_cache` is run on
a copy of a package tree here, never on the installed one.
"""

from __future__ import annotations

import pytest

from rbdyn import _jit


@pytest.fixture
def package(tmp_path, monkeypatch):
    root = tmp_path / "pkg"
    (root / "sub" / "__pycache__").mkdir(parents=True)
    (root / "__pycache__").mkdir()
    (root / "a.py").write_text("x = 1\n")
    (root / "sub" / "b.py").write_text("y = 2\n")
    monkeypatch.setattr(_jit, "_PACKAGE", root)
    monkeypatch.setattr(_jit, "_STAMP", root / "__pycache__" / "rbdyn-sources.sha256")
    return root


def _cached(root):
    files = [root / "__pycache__" / "a.f-1.py311.nbi", root / "sub" / "__pycache__" / "b.g-3.py311.nbc"]
    for f in files:
        f.write_bytes(b"compiled")
    return files


def test_unchanged_sources_keep_the_cache(package):
    _jit._drop_stale_cache()  # first import: no stamp yet, so nothing cached can be trusted
    files = _cached(package)
    _jit._drop_stale_cache()
    assert all(f.exists() for f in files)


@pytest.mark.parametrize("change", ["edit", "new file"])
def test_a_changed_source_anywhere_drops_every_cached_kernel(package, change):
    _jit._drop_stale_cache()
    files = _cached(package)
    if change == "edit":
        (package / "sub" / "b.py").write_text("y = 3\n")  # another file than the cached kernel's
    else:
        (package / "sub" / "c.py").write_text("z = 0\n")
    _jit._drop_stale_cache()
    assert not any(f.exists() for f in files)
    (package / "__pycache__" / "a.py311.pyc").write_bytes(b"bytecode")  # Python's own cache is not numba's
    _jit._drop_stale_cache()
    assert (package / "__pycache__" / "a.py311.pyc").exists()


def test_a_read_only_installation_is_left_alone(package, monkeypatch):
    _jit._drop_stale_cache()
    files = _cached(package)
    (package / "a.py").write_text("x = 2\n")

    def refuse(*args, **kwargs):
        raise PermissionError("read-only")

    monkeypatch.setattr(type(package), "unlink", refuse)
    _jit._drop_stale_cache()  # no exception
    assert all(f.exists() for f in files)


def test_a_change_to_a_module_outside_the_kernels_keeps_the_cache(package):
    (package / "cli.py").write_text("def main(): pass\n")
    _jit._drop_stale_cache()
    files = _cached(package)
    (package / "cli.py").write_text("def main(): return 0\n")
    _jit._drop_stale_cache()
    assert all(f.exists() for f in files)


def _rbdyn_imports(path, package):
    """The rbdyn modules (dotted names) that the module at ``path`` imports."""
    import ast

    module = ".".join(path.relative_to(package.parent).with_suffix("").parts).removesuffix(".__init__")
    here = module if path.name == "__init__.py" else module.rsplit(".", 1)[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            base = here
            for _ in range(node.level - 1):
                base = base.rsplit(".", 1)[0]
            name = (base + (f".{node.module}" if node.module else "")) if node.level else (node.module or "")
            found.add(name)
            found.update(f"{name}.{alias.name}" for alias in node.names)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
    return {name for name in found if name.split(".")[0] == "rbdyn"}


def test_the_modules_outside_the_kernels_use_no_numba_and_no_other_module_imports_them():
    package = _jit._PACKAGE
    outside = {"rbdyn." + name.removesuffix(".py").replace("/", ".") for name in _jit.OUTSIDE_KERNELS}
    for name in _jit.OUTSIDE_KERNELS:
        text = (package / name).read_text(encoding="utf-8")
        assert "numba" not in text and "_jit" not in text and "njit" not in text, name
    for path in sorted(package.rglob("*.py")):
        if path.relative_to(package).as_posix() in _jit.OUTSIDE_KERNELS:
            continue
        assert not _rbdyn_imports(path, package) & outside, path
