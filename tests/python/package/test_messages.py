"""Python's refusals name Python's words (issue 28, section 5): the keyword that accepts or
replaces (overwrite=True, allow_nonfinite=True), never a C++ name or the binding's signature
dump; an integer argument given a float is refused, not truncated; the cast a refusal suggests
keeps the input's precision. The default alphas of regpath are the C++ library's, shared with
`shiftop regpath`."""
import numpy as np
import pytest
import shiftop


def test_ct_geometry_refuses_a_float_count_by_name():
    for name in ("positions", "rings", "sectors", "detectors"):
        with pytest.raises(TypeError, match=rf"^{name} must be an integer, got 6\.0$"):
            shiftop.ct.Geometry(**{name: 6.0})
    assert shiftop.ct.Geometry(positions=np.int64(6), sectors=240).positions == 6


@pytest.mark.parametrize("method", ["mlem", "sirt", "cgls"])
def test_iterations_are_not_truncated(method):
    g = shiftop.ct.Geometry(positions=4, rings=3, sectors=8, detectors=6)
    C = shiftop.ct.system_matrix(g)
    b = C @ shiftop.ct.shepp_logan(g)
    run = getattr(shiftop.ct, method)
    with pytest.raises(TypeError, match=r"^iterations must be an integer, got 2\.5$"):
        run(C, b, iterations=2.5)
    assert len(run(C, b, iterations=np.int32(2)).history) == 2
    with pytest.raises(TypeError, match="pixels must be an integer"):
        shiftop.ct.to_cartesian(g, b[:24] * 0, pixels=8.5)


def test_an_existing_circulant_file_names_overwrite_true(tmp_path):
    C = shiftop.ct.system_matrix(shiftop.ct.Geometry(positions=4, rings=3, sectors=8,
                                                     detectors=6))
    C.save(tmp_path / "C.h5")
    with pytest.raises(shiftop.Error) as refused:
        C.save(tmp_path / "C.h5")
    assert str(refused.value).endswith("already exists: expected a new file (overwrite=True "
                                       "replaces it)")
    assert "CirculantWriteOptions" not in str(refused.value)
    C.save(tmp_path / "C.h5", overwrite=True)


def test_nonfinite_kernels_in_a_file_name_allow_nonfinite_true(tmp_path):
    K = np.ones((2, 2, 3))
    K[0, 1, 2] = np.inf
    np.save(tmp_path / "inf.npy", K)
    with pytest.raises(ValueError) as refused:
        shiftop.Operator.from_file(tmp_path / "inf.npy")
    assert str(refused.value).endswith("expected finite kernel values (allow_nonfinite=True "
                                       "accepts them)")


@pytest.mark.parametrize("dtype,cast", [(np.longdouble, "float64"), (np.clongdouble, "complex128"),
                                        (np.float16, "float64")])
def test_the_suggested_cast_keeps_the_precision(dtype, cast):
    """longdouble was told to cast to float32, losing half its digits for no reason."""
    if np.dtype(dtype).itemsize <= 8 and dtype is not np.float16:
        pytest.skip("longdouble is double on this platform")
    with pytest.raises(TypeError, match=rf"a\.astype\(np\.{cast}\)"):
        shiftop.svd(np.eye(3, dtype=dtype))


def test_regpath_default_alphas_are_the_libraries(rng=np.random.default_rng(3)):
    K = rng.standard_normal((3, 4, 6)) * 1e-5
    d = rng.standard_normal((3, 6))
    path = shiftop.regpath(K, d, mass=0.5)
    gamma = np.concatenate([path.generalized_values(w) for w in range(7)])
    assert path.alphas.size == 40
    assert path.alphas[0] == max(gamma[gamma > 0].min(), 1e-12 * gamma.max())
    assert path.alphas[-1] == gamma.max()
    np.testing.assert_allclose(path.alphas, np.geomspace(path.alphas[0], path.alphas[-1], 40),
                               rtol=1e-14)
