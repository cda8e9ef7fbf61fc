#!/usr/bin/env python3
"""Per-kernel totals of an Nsight Compute CSV (`ncu --metrics gpu__time_duration.sum --csv`):
one line per kernel name (templates and arguments cut), its launches, total and mean time, and
its share of the total, largest first (scripts/gpu-check SVD_LARGE_PROFILE)."""
import argparse
import csv
import collections
import sys


UNITS_IN_US = {"ns": 1e-3, "nsecond": 1e-3, "us": 1.0, "usecond": 1.0, "ms": 1e3, "msecond": 1e3}


def short_name(name):
    """The kernel's name without its template arguments and parameter list."""
    depth, out = 0, []
    for ch in name:
        if ch in "<(":
            depth += 1
        elif ch in ">)":
            depth -= 1
        elif depth == 0:
            out.append(ch)
    return "".join(out).split("::")[-1].strip() or name


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("csv", help="ncu --csv output")
    args = parser.parse_args()
    with open(args.csv, newline="") as f:
        lines = [line for line in f if line.startswith('"')]  # ncu's own messages are not quoted
    rows = list(csv.DictReader(lines))
    if not rows or "Metric Value" not in rows[0]:
        sys.exit(f"{args.csv}: expected ncu CSV rows with a 'Metric Value' column")
    total = collections.defaultdict(float)
    count = collections.Counter()
    for row in rows:
        if row.get("Metric Name") != "gpu__time_duration.sum":
            continue
        value = float(row["Metric Value"].replace(",", ""))
        unit = row.get("Metric Unit")
        if unit not in UNITS_IN_US:
            sys.exit(f"{args.csv}: unknown time unit {unit!r} (expected one of {sorted(UNITS_IN_US)})")
        scale = UNITS_IN_US[unit]
        name = short_name(row["Kernel Name"])
        total[name] += value * scale
        count[name] += 1
    grand = sum(total.values())
    print(f"{'kernel':60s} {'launches':>8s} {'total us':>12s} {'mean us':>10s} {'share':>6s}")
    for name, us in sorted(total.items(), key=lambda item: -item[1]):
        print(f"{name[:60]:60s} {count[name]:8d} {us:12.1f} {us / count[name]:10.2f} "
              f"{us / grand:6.1%}")
    print(f"{'all':60s} {sum(count.values()):8d} {grand:12.1f}")


if __name__ == "__main__":
    main()
