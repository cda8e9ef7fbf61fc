#!/usr/bin/env python3
"""Source inversion for the 2D heat equation, end to end: the p2o map F of point sources observed
by point sensors (shiftop.models.heat2d), noisy data, and the MAP point of the Bayesian inverse
problem d = F m + e two ways: by preconditioned CG on the parameter-space Hessian (with the prior
and with the circulant preconditioner) and by the Cholesky factor of the data-space Hessian
Gamma_noise + F Gamma_prior F* (offline once, then milliseconds per data vector).

    python examples/heat_source_inversion.py [--small] [--out DIR]

Writes heat_source.png (true against recovered source) and heat_cg.png (CG's residual per
iteration, both preconditioners) to --out, and prints the iteration counts, the agreement of the
two MAP points and the error against the true source. Heat diffuses: nearby sources blur
together, and the MAP point recovers the smooth part the sensors can see.
"""

import argparse
import sys
import time
from pathlib import Path

import numpy as np

import shiftop
import shiftop.plot


def relative(a, b):
    return np.linalg.norm(a - b) / np.linalg.norm(b)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--small", action="store_true", help="a small problem (CI)")
    parser.add_argument("--out", default=".", help="directory for the plots")
    args = parser.parse_args()
    n, sources, sensors, nt = (16, 8, 8, 50) if args.small else (48, 32, 16, 200)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)

    # The forward problem: F from the PDE (an observation every 8 PDE steps, so that heat from the
    # sources on the left reaches the sensors on the right within the record), a smooth true
    # source, data with 1% noise.
    model = shiftop.models.heat2d(n=n, sources=sources, sensors=sensors, nt=nt, substeps=8)
    F = model.operator()
    m_true = model.true_source()
    d, sigma = model.data(m_true, noise=0.01, seed=1, return_std=True)
    print(f"heat2d on a {n}x{n} grid: F is {F.shape[0]} x {F.shape[1]} "
          f"(Nd={sensors}, Nm={sources}, Nt={nt}), noise sigma {sigma:.3e}")

    # The Bayesian inverse problem: Gaussian noise, a prior smooth in time (correlation over a
    # fifth of the record, the true pulses' width is a tenth).
    noise = shiftop.GaussianNoise(sigma**2, sensors, nt)
    prior = shiftop.TimeSmoothingPrior(1.0, sources, nt, correlation_steps=nt / 5)

    runs = {}
    for preconditioner in ("prior", "circulant"):
        runs[preconditioner] = shiftop.map_point(F, d, noise, prior, tol=1e-12, maxiter=20000,
                                                 preconditioner=preconditioner)
        run = runs[preconditioner]
        print(f"CG, {preconditioner} preconditioner: {run.iterations} iterations "
              f"({'converged' if run.converged else 'NOT converged'}), "
              f"{run.setup_seconds + run.iteration_seconds:.3f} s")

    start = time.perf_counter()
    hessian = shiftop.DataSpaceHessian(F, noise, prior)  # offline: assemble and factor
    offline = time.perf_counter() - start
    start = time.perf_counter()
    m_map = hessian.map_point(d)  # online
    online = time.perf_counter() - start
    print(f"data-space Hessian {hessian.shape[0]} x {hessian.shape[1]}: offline {offline:.3f} s, "
          f"MAP point online {1e3 * online:.2f} ms")
    print(f"MAP by CG against MAP by the data-space Hessian: relative difference "
          f"{relative(runs['prior'].m, m_map):.1e}")
    print(f"MAP point against the true source: relative error {relative(m_map, m_true):.3f}")

    shiftop.plot.source(m_true, m_map, out / "heat_source.png", dt=model.observation_interval)
    shiftop.plot.cg_convergence(
        list(runs.values()), out / "heat_cg.png",
        labels=[f"{p} preconditioner: {r.iterations} iterations" for p, r in runs.items()])
    print(f"{out / 'heat_source.png'}, {out / 'heat_cg.png'}: the plots")
    return 0


if __name__ == "__main__":
    sys.exit(main())
