"""`shiftop bench --json` on the CPU backend: the floors of issue 19 (bench/README.md, "Floors
and ceilings"). The bytes that must cross memory once (F^ at the plan's FFT length per group of
right-hand sides actually run, the inputs read once, the outputs written once) are checked
exactly against the shape, and the floors against those bytes over the read ceiling reported in
the same object."""
import json

import pytest
from test_fftmatvec_interop import shiftop

ND, NM, NT = 3, 5, 12


def bench(op, nrhs, precision):
    out = shiftop("bench", "--backend", "cpu", "--nd", ND, "--nm", NM, "--nt", NT, "--op", op,
                  "--nrhs", nrhs, "--precision", precision, "--reps", 2, "--warmup", 1,
                  "--estimate", "--threads", 1, "--json")
    return json.loads(out.stdout)


# One vector; 17 vectors in two groups of at most 16 (the CPU's max_rhs); F*F reads F^ twice.
@pytest.mark.parametrize("op, nrhs, precision", [("F", 1, "DDDDD"), ("Fadj", 17, "DDDDD"),
                                                 ("FadjF", 3, "SSSSS")])
def test_bench_floors(op, nrhs, precision):
    r = bench(op, nrhs, precision)
    for key in ("floor_bytes", "whole_apply_floor_ms", "flop_floor_ms", "floor_ms",
                "time_over_floor", "fspectrum_only_floor_ms", "memory_bandwidth", "groups",
                "group_size", "fft_length"):
        assert key in r, key
    assert set(r["floor_bytes"]) == {"spectrum", "inputs", "outputs"}
    assert {"read_GBs", "copy_GBs", "gemm_TFLOPs"} <= set(r["memory_bandwidth"])

    # The CPU plan: FFT length 2Nt, groups of min(nrhs, 16); no flop ceiling measured.
    assert r["fft_length"] == 2 * NT
    assert r["group_size"] == min(nrhs, 16)
    assert r["groups"] == -(-nrhs // r["group_size"])
    assert r["memory_bandwidth"]["gemm_TFLOPs"] is None and r["flop_floor_ms"] is None

    blocks_in = {"F": NM, "Fadj": ND, "FadjF": NM}[op]
    blocks_out = {"F": ND, "Fadj": NM, "FadjF": NM}[op]
    halves = 2 if op == "FadjF" else 1
    element = 8 if precision[3] == "S" else 16
    b = r["floor_bytes"]
    assert b["inputs"] == nrhs * blocks_in * NT * 8
    assert b["outputs"] == nrhs * blocks_out * NT * 8
    assert b["spectrum"] == (r["fft_length"] // 2 + 1) * ND * NM * element * halves * r["groups"]
    assert r["bytes"] == b["spectrum"] + b["inputs"] + b["outputs"]

    read = r["memory_bandwidth"]["read_GBs"]
    assert read > 0
    assert r["whole_apply_floor_ms"] == pytest.approx(r["bytes"] / (read * 1e9) * 1e3, rel=1e-12)
    assert r["fspectrum_only_floor_ms"] == pytest.approx(b["spectrum"] / (read * 1e9) * 1e3,
                                                         rel=1e-12)
    assert r["whole_apply_floor_ms"] > r["fspectrum_only_floor_ms"] > 0
    assert r["floor_ms"] == r["whole_apply_floor_ms"] and r["floor_bandwidth"] == "read"
    assert r["time_over_floor"] == pytest.approx(r["total_ms"] / r["floor_ms"], rel=1e-12)
