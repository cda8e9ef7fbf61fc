"""The locks that serialise calls on one plan (a plan's workspaces serve one apply at a time).

Objects that use several plans (an operator pair, the Hessian, the data-space Hessian) take the
locks of all their owners through `holding`: each lock once, in one global order (by id), so that
two such objects sharing operators cannot deadlock, and an object given the same operator twice
(F as its own QoI map) does not wait for itself. The locks are reentrant, so that a callback run
while they are held (map_point's) may use the same operators.
"""

from __future__ import annotations

import contextlib
import threading


def new_lock() -> threading.RLock:
    """The lock of one operator or prior."""
    return threading.RLock()


@contextlib.contextmanager
def holding(*owners):
    """Holds the `_lock` of every owner that is not None, each once, in order of id."""
    locks = sorted({id(o): o._lock for o in owners if o is not None}.items())
    with contextlib.ExitStack() as stack:
        for _, lock in locks:
            stack.enter_context(lock)
        yield
