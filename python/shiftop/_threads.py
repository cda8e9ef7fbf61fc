"""The one check of every `threads` argument in the package: None for OpenMP's default, else a
count of 1 up to the hardware threads this process may run on (its CPU affinity mask), the rule
of the command line's --threads. More threads only oversubscribe the cores (a small apply ran 28x
slower at twice the cores), and the core refuses absurd counts itself (core/threads.hpp)."""

from __future__ import annotations

import numbers

from . import _core


def thread_count(threads) -> int:
    """The core's thread count for a `threads` argument: 0 (OpenMP's default) for None, else the
    integer itself once checked."""
    if threads is None:
        return 0
    if isinstance(threads, bool) or not isinstance(threads, numbers.Integral):
        raise TypeError(f"threads must be None (OpenMP's default) or an integer, got {threads!r}")
    hardware = _core.hardware_threads()
    if not 1 <= threads <= hardware:
        raise ValueError(f"threads={threads}: expected None (OpenMP's default) or 1..{hardware}, "
                         "the hardware threads this process may run on")
    return int(threads)
