#!/usr/bin/env python3
"""An FFTMatvec user's first five lines with shiftop: open the matrix directory FFTMatvec reads
(binary/meta_adj and the block rows it names), apply F and F*:

    import numpy as np, shiftop
    F = shiftop.Operator.from_file(directory)                     # as FFTMatvec reads it
    m = np.random.default_rng(0).standard_normal(F.input_shape)   # (Nm, Nt), FFTMatvec's SOTI
    d = F @ m                                                     # (Nd, Nt): the matvec
    m_adj = F.H @ d                                               # (Nm, Nt): the adjoint matvec

Run it on your directory, or with --small on a heat-equation p2o map that the shiftop tool writes
in FFTMatvec's format first:

    python examples/fftmatvec_first_five_lines.py path/to/fftmatvec_matrix_dir
    python examples/fftmatvec_first_five_lines.py --small --out /tmp/shiftop-example

It also checks <F m, d> = <m, F* d> and runs FFTMatvec's mixed precision (-prec DSSDD) as
`precision="DSSDD"`.
"""

import argparse
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np

import shiftop


def first_five_lines(directory):
    F = shiftop.Operator.from_file(directory)
    m = np.random.default_rng(0).standard_normal(F.input_shape)
    d = F @ m
    m_adj = F.H @ d
    return F, m, d, m_adj


def small_directory(out):
    """A heat2d p2o map (Nd=3, Nm=12, Nt=40) in FFTMatvec's directory format, by the tool."""
    tool = os.environ.get("SHIFTOP_BIN") or shutil.which("shiftop")
    if not tool:
        sys.exit("--small needs the shiftop tool (installed with the package, or SHIFTOP_BIN)")
    directory = Path(out) / "heat2d_fftmatvec"
    subprocess.run([tool, "model", "heat2d", "--grid", "12", "--sources", "12", "--sensors", "3",
                    "--nt", "40", "-o", str(directory)], check=True, stdout=subprocess.DEVNULL)
    return directory


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("directory", nargs="?", help="an FFTMatvec matrix directory")
    parser.add_argument("--small", action="store_true", help="make a small directory first")
    parser.add_argument("--out", default=".", help="where --small writes its directory")
    args = parser.parse_args()
    if (args.directory is None) == (not args.small):
        parser.error("give an FFTMatvec directory or --small")
    directory = small_directory(args.out) if args.small else args.directory

    F, m, d, m_adj = first_five_lines(directory)
    nd, nm, nt = F.kernel_shape
    print(f"{directory}: F is {F.shape[0]} x {F.shape[1]} (Nd={nd}, Nm={nm}, Nt={nt})")
    adjoint_gap = abs(np.vdot(d, d) - np.vdot(m, m_adj)) / abs(np.vdot(d, d))
    print(f"<F m, F m> vs <m, F* F m>: relative difference {adjoint_gap:.1e}")
    mixed = F.apply(m, precision="DSSDD")
    print(f"F m in DSSDD (FFTMatvec's -prec DSSDD): relative difference to FP64 "
          f"{np.linalg.norm(mixed - d) / np.linalg.norm(d):.1e}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
