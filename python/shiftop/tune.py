"""shiftop.tune: the mixed-precision tuner (mixed-precision paper, sections 3.2 and 4.2).

Every one of the 32 five-phase precision strings ("DDDDD" ... "SSSSS": pad, FFT, GEMV, IFFT,
unpad) of an operator timed and compared with FP64, each with the paper's a-priori error bound
(eq. 6, kappa(F^) from shiftop.spectrum) beside its measured error, and the Pareto front of
(time, error). The compiled core does the work (btt::tune_precision); ``shiftop tune`` is the same
from the command line, and ``shiftop.plot.pareto`` draws either's result.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from . import _core
from ._threads import thread_count
from .operator import Operator, _as_float64

_TUNABLE = ("F", "Fadj")


@dataclass(frozen=True)
class TunedOp:
    """The configurations of one operation, in the order they were measured: the 32 precision
    strings, "DDDDD" first, and on the GPU, after each with an FP32 phase 3 for which the plan
    picked cuBLAS, the same string with the fused kernels (``gemv_kernel`` tells them apart).

    precision: list of the five-letter strings; gemv_kernel: the GPU's phase-3 kernel ("cublas",
    "fused ..."; "" on the CPU); median_ms: median time of one apply (ms); relative_error:
    ||y - y_FP64|| / ||y_FP64|| on an input with mantissa bits below FP32's; error_bound: the
    eq. (6) bound on the error against the exact product; pareto: on the Pareto front (no other
    configuration is as fast and as accurate). The arrays are NumPy arrays of equal length.
    input: the vector (blocks, Nt) every configuration was applied to, for checking an error."""

    op: str
    precision: list
    gemv_kernel: list
    median_ms: np.ndarray
    relative_error: np.ndarray
    error_bound: np.ndarray
    pareto: np.ndarray
    input: np.ndarray

    @property
    def labels(self) -> list:
        """Each configuration's name as the tool prints it: "DDSDD", or "DDSDD fused" /
        "DDSDD cublas" on the GPU where phase 3 is FP32."""
        return [p if not k or p[2] != "S" else f"{p} {k.split(' ')[0]}"
                for p, k in zip(self.precision, self.gemv_kernel)]

    def fastest_under(self, tolerance: float):
        """The index of the fastest configuration whose relative_error is at most `tolerance`,
        or None when none is."""
        ok = np.flatnonzero(self.relative_error <= tolerance)
        return None if ok.size == 0 else int(ok[np.argmin(self.median_ms[ok])])


@dataclass(frozen=True)
class TuneResult:
    """shiftop.tune's result: ``ops`` maps "F" / "Fadj" to a TunedOp; ``kappa`` is the kappa(F^)
    of the bounds; ``shape`` (Nd, Nm, Nt) and ``backend`` describe the operator."""

    kappa: float
    shape: tuple
    backend: str
    ops: dict

    def to_json(self, tolerance: float = 1e-7) -> dict:
        """The layout of ``shiftop tune --json`` (what shiftop.plot.pareto reads), with the
        fastest configuration under `tolerance` per operation."""
        out = {"shape": dict(zip(("nd", "nm", "nt"), map(int, self.shape))),
               "operator": "python", "backend": self.backend, "tolerance": float(tolerance),
               "kappa": float(self.kappa), "ops": {}}
        for name, t in self.ops.items():
            entry = {"configurations": [
                {"precision": p, "gemv_kernel": k, "median_ms": float(ms),
                 "relative_error": float(e), "error_bound": float(b), "pareto": bool(f)}
                for p, k, ms, e, b, f in zip(t.precision, t.gemv_kernel, t.median_ms,
                                             t.relative_error, t.error_bound, t.pareto)]}
            best = t.fastest_under(tolerance)
            if best is not None:
                entry["fastest_under_tolerance"] = t.precision[best]
                entry["fastest_under_tolerance_gemv_kernel"] = t.gemv_kernel[best]
                entry["speedup_over_fp64"] = float(t.median_ms[0] / t.median_ms[best])
            out["ops"][name] = entry
        return out


def tune(operator, first_row=None, *, ops=("F", "Fadj"), repetitions: int = 10, kappa=None,
         threads=None) -> TuneResult:
    """Times and measures all 32 precision configurations of F and F* (mixed-precision paper,
    sections 3.2 and 4.2): each with its median time, its relative error against FP64 and the
    paper's eq. (6) a-priori bound, and whether it is on the Pareto front of (time, error).

    operator: a shiftop.Operator (tuned as it is, on its backend; its precision is restored
    afterwards) or the kernels K of shape (Nd, Nm, Nt) (with `first_row` for a general block
    Toeplitz operator), for which a CPU operator is made. ops: "F" and/or "Fadj". repetitions:
    timed applies per configuration (median reported). kappa: kappa(F^) for the bounds; None
    computes it with shiftop.spectrum (an Operator's kernels are recovered for it first, see
    Operator.spectrum). threads: CPU threads of the operator made from kernels and of the
    spectrum (None: OpenMP's default).

    Returns a TuneResult: ``result.ops["F"].relative_error`` etc. are NumPy arrays, and
    ``shiftop.plot.pareto(result, "front.png")`` draws them.

    Example::

        result = shiftop.tune(shiftop.Operator.from_kernels(K), repetitions=5)
        f = result.ops["F"]
        best = f.fastest_under(1e-7)
        print(f.precision[best], f.median_ms[0] / f.median_ms[best], "x FP64")
    """
    ops = (ops,) if isinstance(ops, str) else tuple(ops)
    for op in ops:
        if op not in _TUNABLE:
            raise ValueError(f"ops: expected 'F' or 'Fadj', got {op!r}")
    if isinstance(repetitions, bool) or not isinstance(repetitions, (int, np.integer)) \
            or repetitions < 1:
        raise ValueError(f"repetitions: expected a positive integer, got {repetitions!r}")
    if kappa is not None and not kappa >= 1:  # NaN is refused too
        raise ValueError(f"kappa: expected None or a number >= 1, got {kappa!r}")
    n_threads = thread_count(threads)
    column = row = None
    if isinstance(operator, Operator):
        if first_row is not None:
            raise ValueError("first_row: only with kernels; an Operator already has its own")
        if kappa is None:
            kappa = operator.spectrum(threads=threads).kappa
        op_object = operator
    else:
        column = _as_float64("kernels", operator)
        row = None if first_row is None else _as_float64("first_row", first_row)
        op_object = Operator.from_kernels(column, first_row=row, max_rhs=1, threads=threads)
    with op_object._lock:
        raw = _core.tune_precision(
            op_object._plan, column, row, list(ops), int(repetitions),
            0.0 if kappa is None else float(kappa), n_threads,
            op_object.device if op_object.device is not None else 0)
    tuned = {name: TunedOp(op=name, precision=list(e["precision"]),
                           gemv_kernel=list(e["gemv_kernel"]),
                           median_ms=np.asarray(e["median_ms"], dtype=np.float64),
                           relative_error=np.asarray(e["relative_error"], dtype=np.float64),
                           error_bound=np.asarray(e["error_bound"], dtype=np.float64),
                           pareto=np.asarray(e["pareto"], dtype=bool),
                           input=np.frombuffer(e["input"], dtype=np.float64).reshape(
                               (op_object if name == "F" else op_object.H).input_shape))
             for name, e in raw["ops"].items()}
    return TuneResult(kappa=float(raw["kappa"]), shape=tuple(op_object.kernel_shape),
                      backend=op_object.backend, ops=tuned)
