"""progress= of shiftop.svd and shiftop.gsvd (issue 28, section 5): a shiftop.SweepProgress after
every sweep of every matrix of a stack, as many as the stats count, the last one of each matrix
the converged sweep; the results the same as without it; what it raises ends the call."""
import numpy as np
import pytest
import shiftop


def by_matrix(seen):
    out = {}
    for p in seen:
        assert isinstance(p, shiftop.SweepProgress)
        out.setdefault(p.matrix, []).append(p)
    return out


@pytest.mark.parametrize("variant", ["pointwise", "full-block"])
def test_svd_reports_every_sweep_of_every_matrix(variant):
    a = np.random.default_rng(1).standard_normal((3, 24, 16))
    seen = []
    out = shiftop.svd(a, compute_uv=False, variant=variant, threads=2, progress=seen.append)
    np.testing.assert_array_equal(out, shiftop.svd(a, compute_uv=False, variant=variant))
    matrices = by_matrix(seen)
    assert sorted(matrices) == [0, 1, 2]
    for sweeps in matrices.values():
        assert [p.sweep for p in sweeps] == list(range(1, len(sweeps) + 1))
        assert sweeps[-1].rotations == 0 and all(p.rotations > 0 for p in sweeps[:-1])
        assert {p.max_sweeps for p in sweeps} == {60}


def test_gsvd_reports_every_sweep():
    rng = np.random.default_rng(2)
    F, G = rng.standard_normal((20, 8)), rng.standard_normal((12, 8))
    seen = []
    result = shiftop.gsvd(F, G, progress=seen.append)
    assert [p.sweep for p in seen] == list(range(1, len(seen) + 1)) and len(seen) > 1
    assert seen[-1].rotations == 0 and {p.matrix for p in seen} == {0}
    np.testing.assert_array_equal(result, shiftop.gsvd(F, G))


def test_what_progress_raises_ends_the_call():
    def stop(p):
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        shiftop.svd(np.random.default_rng(3).standard_normal((2, 10, 6)), progress=stop)
    with pytest.raises(TypeError, match="progress must be a callable or None, got 3"):
        shiftop.svd(np.eye(3), progress=3)
