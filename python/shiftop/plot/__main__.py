"""python -m shiftop.plot COMMAND ...: the plots of shiftop.plot from the command line. A bad input
gives one line "shiftop.plot: error: ..." on stderr and exit status 1 (2 for bad usage)."""

import argparse
import sys

from . import bench_phases, bench_sweep, cg_convergence, pareto, regpath, source, spectrum
from ._files import FORMATS


def _parameters(text):
    try:
        return [int(j) for j in text.split(",")]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected indices separated by commas, got '{text}'")


def _parser():
    parser = argparse.ArgumentParser(
        prog="python -m shiftop.plot",
        description="Plots of the JSON the shiftop tool writes (matplotlib). The output's "
        "extension (.png, .svg, .pdf) picks the format unless --format is given.")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    def command(name, help_text):
        sub = commands.add_parser(name, help=help_text, description=help_text)
        sub.add_argument("-o", "--output", required=True, help="the plot file")
        sub.add_argument("--format", choices=FORMATS, help="format, whatever -o is named")
        return sub

    command("pareto", "the Pareto front of `shiftop tune --json`").add_argument(
        "json", help="tune JSON")
    command("bench-phases", "time per phase of `shiftop bench --json` results").add_argument(
        "json", nargs="+", help="bench JSON, one or more")
    command("bench-sweep", "time against the one size that differs between bench results, or "
            "the sweeps of a bench/run_gpu.py result").add_argument(
        "json", nargs="+", help="bench JSON: several, or one with 'sweeps'")
    cg = command("cg-convergence", "relative residual per CG iteration of `shiftop solve --json`")
    cg.add_argument("json", nargs="+", help="solve JSON, one or more")
    cg.add_argument("--label", action="append", help="the line's label, once per JSON")
    src = command("source", "true against recovered source, .npy files of shape (Nm, Nt)")
    src.add_argument("true", help="the true source (.npy)")
    src.add_argument("recovered", help="the recovered source (.npy)")
    src.add_argument("--kind", choices=("auto", "series", "images"), default="auto")
    src.add_argument("--dt", type=float, help="observation interval (labels time, not steps)")
    src.add_argument("--parameters", type=_parameters, help="indices for --kind series: 0,5,9")
    spec = command("spectrum", "singular values of every F^[w] against w (`shiftop spectrum`)")
    spec.add_argument("sigma", help="a .npy file of shape (Nt+1, min(Nd, Nm))")
    spec.add_argument("--title", help="the plot's title (kappa is added below it)")
    spec.add_argument("--tolerance", type=float, help="relative rank tolerance to draw")
    path = command("regpath", "L-curve and GCV of a regularisation path (`shiftop regpath`)")
    path.add_argument("json", help="regpath JSON: alphas, residual_norms, seminorms, gcv, "
                      "gcv_choice, lcurve_corner")
    path.add_argument("--title", help="the figure's title")
    return parser


def main(argv=None):
    args = _parser().parse_args(argv)
    try:
        if args.command == "pareto":
            pareto(args.json, args.output, format=args.format)
        elif args.command == "bench-phases":
            bench_phases(args.json, args.output, format=args.format)
        elif args.command == "bench-sweep":
            bench_sweep(args.json, args.output, format=args.format)
        elif args.command == "cg-convergence":
            cg_convergence(args.json, args.output, labels=args.label, format=args.format)
        elif args.command == "regpath":
            regpath(args.json, args.output, title=args.title, format=args.format)
        elif args.command == "spectrum":
            spectrum(args.sigma, args.output, title=args.title, tolerance=args.tolerance,
                     format=args.format)
        else:
            source(args.true, args.recovered, args.output, kind=args.kind, dt=args.dt,
                   parameters=args.parameters, format=args.format)
    except (ValueError, TypeError, OSError) as e:
        print(f"shiftop.plot: error: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
