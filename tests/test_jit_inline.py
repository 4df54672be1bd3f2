"""The copier rbdyn gives numba's IR inliner (:class:`rbdyn._jit._BlockCopier`).

numba copies a callee's IR block by block to inline it; rbdyn makes the blocks of one copy share
one memo, so that the function's scope is copied once per copy instead of once per block. The
copies must still be copies: new objects, one scope for the whole copy, a fresh copy each time.
"""

from __future__ import annotations

import copy

import numba
import numpy as np
from numba.core import inline_closurecall, ir
from numba.core.compiler import run_frontend

from rbdyn import _jit


def _branchy(a, n):
    total = 0.0
    for i in range(n):
        if a[i] > 0.0:
            total += a[i]
        else:
            total -= 2.0 * a[i]
    return total


def _copies(copier, func_ir):
    return {label: copier.deepcopy(block) for label, block in func_ir.blocks.items()}


def _scopes(blocks):
    found = {id(b.scope): b.scope for b in blocks.values()}
    for block in blocks.values():
        for stmt in block.body:
            for var in stmt.list_vars():
                found[id(var.scope)] = var.scope
    return list(found.values())


def test_numbas_inliner_uses_the_copier():
    assert isinstance(inline_closurecall.copy, _jit._BlockCopier)


def test_one_copy_shares_one_new_scope_and_each_copy_is_new():
    func_ir = run_frontend(_branchy)
    assert len(func_ir.blocks) > 3  # a loop and a branch: several blocks to copy
    copier = _jit._BlockCopier(copy)
    first, second = _copies(copier, func_ir), _copies(copier, func_ir)
    for blocks in (first, second):
        (scope,) = _scopes(blocks)
        assert scope is not func_ir.blocks[min(func_ir.blocks)].scope
        assert sorted(scope.localvars._con) == sorted(func_ir.blocks[min(func_ir.blocks)].scope.localvars._con)
        for label, block in blocks.items():
            assert block is not func_ir.blocks[label]
            assert str(block) == str(func_ir.blocks[label])
    assert _scopes(first)[0] is not _scopes(second)[0]
    assert all(first[label] is not second[label] for label in first)


def test_other_objects_and_explicit_memos_go_to_deepcopy():
    copier = _jit._BlockCopier(copy)
    data = {"a": [1, 2]}
    out = copier.deepcopy(data)
    assert out == data and out["a"] is not data["a"]
    block = next(iter(run_frontend(_branchy).blocks.values()))
    memo = {}
    assert isinstance(copier.deepcopy(block, memo), ir.Block) and id(block) in memo
    assert copier.copy is copy.copy


def test_an_inlined_callee_with_branches_computes_what_python_does():
    callee = numba.njit(inline="always")(_branchy)

    @numba.njit
    def caller(a, n):
        return callee(a, n) + callee(a[::-1], n)

    a = np.array([1.5, -2.0, 0.25, -0.125, 3.0])
    assert caller(a, 5) == _branchy(a, 5) + _branchy(a[::-1], 5)
