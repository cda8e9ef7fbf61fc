"""Plots of the JSON that the shiftop tool writes, drawn with matplotlib.

Every function takes the tool's JSON (a file name or the parsed dict) and an output file whose
extension, .png, .svg or .pdf, picks the format (or pass ``format=``); it draws through
matplotlib's Figure API, so the caller's pyplot backend is left alone, writes the file and returns
the Figure::

    pareto(tune_json, out)              # shiftop tune --json or shiftop.tune(): the Pareto front
    bench_phases(bench_json, out)       # shiftop bench --json: time per phase
    bench_sweep(bench_jsons, out)       # several bench runs: time against the swept size
    cg_convergence(solve_jsons, out)    # shiftop solve --json: relative residual per iteration
    source(true, recovered, out)        # true against recovered source (arrays or .npy files)
    spectrum(sigma, out)                # singular values of every F^[w] (op.spectrum(), .npy)
    regpath(path_json, out)             # shiftop regpath --json / RegPath: L-curve and GCV

The same from the command line: ``python -m shiftop.plot pareto t.json -o t.png`` (``--help``
lists the commands).
"""

from ._bench import bench_phases, bench_sweep
from ._convergence import cg_convergence
from ._pareto import pareto
from ._source import source
from ._regpath import regpath
from ._spectrum import spectrum

__all__ = ["pareto", "bench_phases", "bench_sweep", "cg_convergence", "source", "spectrum",
           "regpath"]
