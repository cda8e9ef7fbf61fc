"""The progress= callable of shiftop.svd and shiftop.gsvd: called after every sweep on the CPU
(the library's SweepCallback, include/shiftop/svd/progress.hpp) with a SweepProgress."""

from __future__ import annotations

from typing import NamedTuple


class SweepProgress(NamedTuple):
    """One finished (block-)sweep of one matrix (pair) of a call."""

    matrix: int  # its index in the flattened stack (0 for a single matrix)
    sweep: int  # sweeps done on it, from 1
    max_sweeps: int  # the most it may run
    rotations: int  # rotations (gsvd: transformations) in this sweep; 0: converged


def sweep_reporter(progress):
    """progress as the core's callback of (matrix, sweep, max_sweeps, rotations); None: none."""
    if progress is None:
        return None
    if not callable(progress):
        raise TypeError(f"progress must be a callable or None, got {progress!r}")
    return lambda *fields: progress(SweepProgress(*fields))
