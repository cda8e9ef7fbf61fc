"""Exact zeros on a logarithmic axis. FP64 against itself has error 0 and a converged CG may reach a
residual of 0; log(0) is -inf, which drew the old SVG front line off the chart. Zeros are drawn at a
floor one decade below the smallest positive value, whose tick reads "exact (0)", separated from
the decades above by a dotted line."""

import math

from matplotlib.ticker import FixedLocator, FuncFormatter, LogFormatterSciNotation, NullLocator

ZERO_LABEL = "exact (0)"


def zero_floor(values):
    """Where zeros are drawn: one decade below the smallest positive finite value, rounded down
    to a power of ten (1e-17 when there is none)."""
    positive = [v for v in values if v > 0 and math.isfinite(v)]
    lowest = min(positive) if positive else 1e-16
    return 10.0 ** (math.floor(math.log10(lowest)) - 1)


def at_floor(values, floor):
    """`values` with every zero replaced by `floor`."""
    return [v if v > 0 else floor for v in values]


def mark_floor(ax, floor, top):
    """Log y axis from just under `floor` to just over `top`: decade ticks (at most about eight),
    the floor's tick labelled ZERO_LABEL and a dotted line between it and the first decade."""
    ax.set_yscale("log")
    first = math.floor(math.log10(floor)) + 1
    last = math.ceil(math.log10(max(top, floor * 10)))
    step = max(1, math.ceil((last - first + 1) / 8))
    decades = [10.0**e for e in range(last, first - 1, -step)][::-1]
    ax.set_ylim(floor / 10**0.4, 10.0**last * 10**0.2)
    ax.axhline(floor * 10**0.5, color="0.55", linestyle=":", linewidth=0.8)
    ax.yaxis.set_major_locator(FixedLocator([floor, *decades]))
    ax.yaxis.set_minor_locator(NullLocator())
    scientific = LogFormatterSciNotation()
    scientific.set_axis(ax.yaxis)
    ax.yaxis.set_major_formatter(
        FuncFormatter(lambda y, pos: ZERO_LABEL if y == floor else scientific(y, pos)))
