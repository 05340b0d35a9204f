"""Plots (PNG and SVG) of a metric against the cutoff k, one line per config.

matplotlib is an optional extra (``ragmark-eval[plot]``), imported only when a plot is drawn;
figures are drawn on the Agg canvas without pyplot, so no global backend is changed and
no window opens.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ragmark.errors import MissingExtraError

FORMATS = ("png", "svg")
MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*")
DASHES = ("-", "--", "-.", ":")


def same_as(curves: Mapping[str, Sequence[float | None]]) -> dict[str, str]:
    """name -> the first earlier name whose curve is identical (each value equal to
    1e-12, gaps in the same places): such lines lie on top of each other."""
    out: dict[str, str] = {}
    names = list(curves)
    for i, name in enumerate(names):
        for earlier in names[:i]:
            if earlier not in out and _equal(curves[name], curves[earlier]):
                out[name] = earlier
                break
    return out


def _equal(a: Sequence[float | None], b: Sequence[float | None]) -> bool:
    return len(a) == len(b) and all(
        (x is None and y is None) or (x is not None and y is not None and abs(x - y) <= 1e-12)
        for x, y in zip(a, b, strict=True))


def require_matplotlib() -> None:
    """A MissingExtraError naming ``ragmark-eval[plot]`` when matplotlib is not installed;
    call it before long work so the user learns early."""
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        raise MissingExtraError("matplotlib", "plot") from None


def _figure() -> Any:
    require_matplotlib()
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(7.0, 4.5), dpi=100)
    FigureCanvasAgg(fig)
    return fig


def plot_curves(
    curves: Mapping[str, Sequence[float | None]],
    prefix: str | Path,
    *,
    title: str,
    ylabel: str,
    ylim: tuple[float, float] | None = (0.0, 1.05),
) -> list[Path]:
    """Draw one line per name (``curves[name][i]`` is the value at k = i + 1; None is a
    gap) and write ``{prefix}.png`` and ``{prefix}.svg``; returns their paths.

    Every line has its own marker and dash style, later lines are drawn thinner with
    larger hollow markers, so lines that coincide stay visible; the legend says which
    configs have identical curves."""
    fig = _figure()
    ax = fig.add_subplot()
    longest = max((len(v) for v in curves.values()), default=0)
    twins = same_as(curves)
    for i, (name, values) in enumerate(curves.items()):
        ks = list(range(1, len(values) + 1))
        ys = [math.nan if v is None else v for v in values]
        label = name + (f" (identical to {twins[name]})" if name in twins else "")
        ax.plot(ks, ys, marker=MARKERS[i % len(MARKERS)], linestyle=DASHES[i % len(DASHES)],
                markersize=4 + 2 * (i % 3), markerfacecolor="none" if i else None,
                linewidth=max(0.8, 2.2 - 0.5 * i), label=label, zorder=2 + len(curves) - i)
    ax.set_xlabel("k (passages retrieved)")
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    if longest:
        ax.set_xlim(0.5, longest + 0.5)
        step = max(1, math.ceil(longest / 20))
        ax.set_xticks(range(1, longest + 1, step))
    if ylim is not None:
        ax.set_ylim(*ylim)
    ax.grid(True, alpha=0.3)
    if curves:
        ax.legend(loc="lower right")
    return _save(fig, prefix)


def _save(fig: Any, prefix: str | Path) -> list[Path]:
    fig.tight_layout()
    base = Path(prefix)
    base.parent.mkdir(parents=True, exist_ok=True)
    from matplotlib import rc_context

    paths = []
    # SVG text stays text (searchable, editable); no date or software stamp, so the
    # same data gives the same files
    with rc_context({"svg.fonttype": "none", "svg.hashsalt": "ragmark"}):
        for fmt in FORMATS:
            path = base.with_name(f"{base.name}.{fmt}")
            meta = {"Date": None} if fmt == "svg" else {"Software": None}
            fig.savefig(path, format=fmt, metadata=meta)
            paths.append(path)
    return paths


def plot_series(xs: Sequence[str], series: Mapping[str, Sequence[float | None]],
                prefix: str | Path, *, title: str, ylabel: str, xlabel: str) -> list[Path]:
    """One line per name over the labelled points ``xs`` (e.g. history runs); None is a
    gap. Writes ``{prefix}.png`` and ``{prefix}.svg``."""
    fig = _figure()
    ax = fig.add_subplot()
    for i, (name, values) in enumerate(series.items()):
        ys = [math.nan if v is None else v for v in values]
        ax.plot(range(len(ys)), ys, marker=MARKERS[i % len(MARKERS)],
                linestyle=DASHES[i % len(DASHES)], label=name)
    ax.set_xticks(range(len(xs)), list(xs))
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.grid(True, alpha=0.3)
    if series:
        ax.legend(loc="best")
    return _save(fig, prefix)
