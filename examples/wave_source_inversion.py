#!/usr/bin/env python3
"""Source inversion for the 2D acoustic wave equation, end to end: the p2o map F of point sources
observed by point sensors in a medium with an absorbing sponge (shiftop.models.wave2d), noisy
data, and the MAP point of d = F m + e by preconditioned CG (prior and circulant preconditioners)
and by the data-space Hessian Gamma_noise + F Gamma_prior F*, whose factor also gives posterior
variances: how well each recovered value is determined by the data.

    python examples/wave_source_inversion.py [--small] [--out DIR]

Writes wave_source.png (true, recovered and the posterior band of a few sources' time series) and
wave_cg.png (CG's residual per iteration) to --out, and prints the iteration counts, the agreement
of the two MAP points, the error against the true source and posterior standard deviations.
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
    n, sources, sensors, nt = (24, 8, 8, 60) if args.small else (48, 32, 16, 300)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)

    # The forward problem: F from the PDE (sources left, sensors right, clear of the sponge), a
    # smooth true source, data with 1% noise.
    model = shiftop.models.wave2d(n=n, sources=sources, sensors=sensors, nt=nt)
    F = model.operator()
    m_true = model.true_source()
    d, sigma = model.data(m_true, noise=0.01, seed=1, return_std=True)
    print(f"wave2d on a {n}x{n} grid: F is {F.shape[0]} x {F.shape[1]} "
          f"(Nd={sensors}, Nm={sources}, Nt={nt}), noise sigma {sigma:.3e}")

    # Gaussian noise and a prior smooth in time (correlation over a fifth of the record).
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

    # Posterior standard deviations of every step of a few sources (prior standard deviation: 1).
    shown = [0, sources // 2, sources - 1]
    pairs = np.array([(j, t) for j in shown for t in range(nt)])
    std = np.sqrt(hessian.posterior_variance(pairs)).reshape(len(shown), nt)
    for j, s in zip(shown, std):
        print(f"source {j}: posterior standard deviation {s.min():.2f} to {s.max():.2f}")

    figure = shiftop.plot.source(m_true, m_map, out / "wave_source.png", kind="series",
                                 parameters=shown, dt=model.observation_interval)
    times = np.arange(nt) * model.observation_interval
    for ax, j, s in zip([ax for ax in figure.axes if ax.get_visible()], shown, std):
        ax.fill_between(times, m_map[j] - 2 * s, m_map[j] + 2 * s, color="#c0392b", alpha=0.15,
                        label="posterior +-2 std")
    figure.axes[0].legend(fontsize=7)
    figure.savefig(out / "wave_source.png", dpi=120)
    shiftop.plot.cg_convergence(
        list(runs.values()), out / "wave_cg.png",
        labels=[f"{p} preconditioner: {r.iterations} iterations" for p, r in runs.items()])
    print(f"{out / 'wave_source.png'}, {out / 'wave_cg.png'}: the plots")
    return 0


if __name__ == "__main__":
    sys.exit(main())
