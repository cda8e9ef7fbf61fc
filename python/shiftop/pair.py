"""shiftop.OperatorPair: an operator F and a second operator G on the same time grid.

G is what FFTMatvec calls the auxiliary matrix: a parameter-to-QoI map (Nq x Nm blocks), or a
prior-solved matrix such as F Gamma_prior (Nd x Nm). The pair applies G, G*, and the mixed
products G*F (parameter space to G's parameter space, through F's data: needs Nq = Nd) and FG*
(G's data space to F's data space, through the parameters: needs G's Nm = F's Nm, any Nq).

The mixed products are exact: two passes of the compiled core in one call (F then G*, or G* then
F), sharing the loop over groups of right-hand sides and one middle buffer. One forward and one
inverse transform would skip the truncation to Nt samples between the two products, which is not
diagonal in frequency, and be off by 8-100% on random kernels (include/shiftop/btt/pair.hpp).
"""

from __future__ import annotations

import numpy as np

from . import _core
from ._locks import holding
from .operator import Operator, _as_float64, _is_device_array

_ACTIONS = ("G", "Gadj", "GadjF", "FGadj")


class _PairAction:
    """A mixed product of an OperatorPair as an object: pair.GadjF @ m, .shape, .input_shape."""

    __array_ufunc__ = None

    def __init__(self, pair: OperatorPair, action: str):
        self._pair = pair
        self._action = action

    @property
    def input_shape(self) -> tuple[int, int]:
        """Shape (blocks, Nt) of one input vector of this action."""
        return (self._pair._core.input_blocks(self._action), self._pair.nt)

    @property
    def output_shape(self) -> tuple[int, int]:
        """Shape (blocks, Nt) of one output vector of this action."""
        return (self._pair._core.output_blocks(self._action), self._pair.nt)

    @property
    def shape(self) -> tuple[int, int]:
        """The matrix shape (rows, columns) of this action on flattened vectors."""
        (bo, nt), (bi, _) = self.output_shape, self.input_shape
        return (bo * nt, bi * nt)

    @property
    def dtype(self) -> np.dtype:
        """float64: inputs are cast to it, outputs are float64."""
        return np.dtype(np.float64)

    def __matmul__(self, x):
        return self._pair.apply(x, op=self._action)

    def __rmatmul__(self, x):
        raise TypeError("x @ pair.<action> is not defined: apply the action to x, action @ x")

    def __repr__(self):
        return f"<shiftop pair action {self._action} of {self._pair!r}>"


class OperatorPair:
    """F and G (two shiftop.Operator objects on one backend, same Nt), applied as::

        q = pair.G @ m           # G m: (Nm', Nt) -> (Nq, Nt); pair.F and pair.G are F and G
        m2 = pair.G.H @ q        # G* q (or pair.apply(q, op="Gadj"))
        h = pair.GadjF @ m       # G* F m: (Nm, Nt) -> (Nm', Nt), needs Nq = Nd
        d = pair.FGadj @ q       # F G* q: (Nq, Nt) -> (Nd, Nt), needs Nm' = Nm
        pair.apply(x, op="GadjF", out=buffer)

    A batch (nrhs, blocks, Nt) goes through in one call, max_rhs vectors per group. The pair
    shares the operators' plans (no copy of F^ or G^) and their locks: applies of the pair and of
    F and G from other threads do not overlap.
    """

    def __init__(self, F: Operator, G: Operator, *, max_rhs: int = 16):
        """F: the operator (Nd, Nm, Nt); G: the second operator (Nq, Nm', Nt) on the same time
        grid and backend. max_rhs: right-hand sides per group (the middle buffer's size)."""
        for name, a in (("F", F), ("G", G)):
            if not isinstance(a, Operator):
                raise TypeError(f"{name} must be a shiftop.Operator, got {type(a).__name__}")
        if F.backend != G.backend or F.device != G.device:
            raise ValueError(
                f"F runs on {F.backend}{'' if F.device is None else f':{F.device}'} and G on "
                f"{G.backend}{'' if G.device is None else f':{G.device}'}: expected one backend "
                "and device"
            )
        if not isinstance(max_rhs, (int, np.integer)) or isinstance(max_rhs, bool):
            raise TypeError(f"max_rhs must be an integer, got {max_rhs!r}")
        self.F, self.G = F, G
        self._core = _core.OperatorPair.create(
            F._plan, G._plan, max_rhs=int(max_rhs), device=F.device or 0
        )

    @property
    def nt(self) -> int:
        """Nt, the time steps F and G share."""
        return self.F.kernel_shape[2]

    @property
    def max_rhs(self) -> int:
        """Right-hand sides per group."""
        return self._core.max_rhs

    def supports(self, op: str) -> bool:
        """Whether the shapes allow op ('G', 'Gadj', 'GadjF', 'FGadj')."""
        self._check_op(op)
        return self._core.supports(op)

    @property
    def GadjF(self) -> _PairAction:  # noqa: N802
        """G*F as an action: pair.GadjF @ m."""
        return _PairAction(self, "GadjF")

    @property
    def FGadj(self) -> _PairAction:  # noqa: N802
        """FG* as an action: pair.FGadj @ q."""
        return _PairAction(self, "FGadj")

    @staticmethod
    def _check_op(op):
        if op not in _ACTIONS:
            raise ValueError(f"op {op!r}: expected one of 'G', 'Gadj', 'GadjF', 'FGadj'")

    def apply(self, x, op: str = "GadjF", out=None):
        """op x for op in 'G', 'Gadj', 'GadjF', 'FGadj'.

        x: one vector (blocks, Nt) or a batch (nrhs, blocks, Nt), a NumPy array (or anything
            np.asarray takes; device arrays are refused), cast to float64 (copied to C order if
            needed); blocks: G's Nm for 'G', Nq for 'Gadj' and 'FGadj', F's Nm for 'GadjF'.
        out: optional C-contiguous float64 array of the output's shape, written in place and
            returned (it must not overlap x).
        """
        self._check_op(op)
        if not self._core.supports(op):
            nd, nm, _ = self.F.kernel_shape
            nq, gm, _ = self.G.kernel_shape
            raise ValueError(
                f"GadjF applies G* to F's output: G has Nq = {nq} block rows and F has Nd = {nd}"
                if op == "GadjF"
                else f"FGadj applies F to G*'s output: G has Nm = {gm} parameter blocks and F "
                f"has Nm = {nm}"
            )
        if _is_device_array(x):
            raise TypeError(
                f"x of type {type(x).__module__}.{type(x).__name__}: OperatorPair takes NumPy "
                "arrays (a 'cuda' pair copies x in and y out and keeps the middle on the GPU); "
                "for device arrays apply the two steps, e.g. pair.G.H @ (pair.F @ x)"
            )
        x = _as_float64("x", x)
        nt = self.nt
        blocks_in, blocks_out = self._core.input_blocks(op), self._core.output_blocks(op)
        if x.ndim == 2 and x.shape == (blocks_in, nt):
            nrhs, out_shape = 1, (blocks_out, nt)
        elif x.ndim == 3 and x.shape[1:] == (blocks_in, nt):
            nrhs, out_shape = x.shape[0], (x.shape[0], blocks_out, nt)
        else:
            raise ValueError(
                f"input of {op} must have shape ({blocks_in}, {nt}) or "
                f"(nrhs, {blocks_in}, {nt}), got {x.shape}"
            )
        y = Operator._output(out, out_shape, op)
        with holding(self.F, self.G):  # one lock when F is G; one order for all pairs
            if nrhs > 0:
                self._core.apply(op, x, y, nrhs)
        return y

    def __repr__(self):
        nd, nm, nt = self.F.kernel_shape
        nq, gm, _ = self.G.kernel_shape
        return (
            f"<shiftop.OperatorPair F (Nd, Nm, Nt) = ({nd}, {nm}, {nt}), "
            f"G (Nq, Nm, Nt) = ({nq}, {gm}, {nt}), {self.F.backend}>"
        )
