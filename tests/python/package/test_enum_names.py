"""The Python layer's own lists of choices are the library's names (one table per enum in C++,
core/enum_names.hpp, exposed as shiftop._core.enum_names): a value added to a table must be
accepted, refused and documented by the Python functions that check or describe it before calling
the core, or this fails."""
import importlib
import re

import numpy as np
import pytest

import shiftop
from shiftop import _core


def names(key):
    return _core.enum_names[key]


def module(name):
    return importlib.import_module(f"shiftop.{name}")


def quoted(name, text):
    return re.search(rf"['\"]{re.escape(name)}['\"]", text) is not None


def test_the_python_checks_accept_the_library_names():
    assert module("operator")._ACTIONS == names("op")
    assert module("pair")._ACTIONS == names("pair_op")
    assert set(module("svd")._VARIANTS) == set(names("variant"))
    assert set(module("gsvd")._VARIANTS) == set(names("variant"))
    assert set(module("gsvd")._STRATEGIES) == set(names("strategy"))
    # shiftop.svd offers the parallel strategies: rc (row-cyclic, one pair per step) is
    # documented as the GSVD's sequential order only.
    assert set(module("svd")._STRATEGIES) == set(names("strategy")) - {"rc"}


@pytest.mark.parametrize("function,keys", [
    (shiftop.Operator.from_kernels, ["backend", "planning"]),
    (shiftop.CirculantOperator, ["kernel", "transpose"]),
    (shiftop.svd, ["variant"]),
    (shiftop.gsvd, ["variant", "strategy"]),
    (shiftop.map_point, ["preconditioner"]),
])
def test_the_docstrings_name_every_choice(function, keys):
    for key in keys:
        for name in names(key):
            assert quoted(name, function.__doc__), f"{function.__qualname__}: {key} {name!r}"


def test_the_python_refusals_list_every_choice():
    op = shiftop.Operator.from_kernels(np.ones((1, 1, 2)), planning="estimate")
    with pytest.raises(ValueError) as refused:
        op.apply(np.ones(2), op="X")
    assert all(quoted(name, str(refused.value)) for name in names("op")), refused.value


def test_the_core_refuses_in_the_library_words():
    with pytest.raises(ValueError, match="planning: expected estimate or measure, got 'fast'"):
        shiftop.Operator.from_kernels(np.ones((1, 1, 2)), planning="fast")
