"""Deterministic SVG charts (hand-written, fixed number formatting: same report, same bytes) and PNG through
matplotlib when it is installed."""

from __future__ import annotations

from html import escape
from typing import Any

WIDTH, HEIGHT = 640, 360
LEFT, RIGHT, TOP, BOTTOM = 56, 16, 28, 44


def _scale(values: list[float], lo: float, hi: float, out_lo: float, out_hi: float) -> list[float]:
    span = (hi - lo) or 1.0
    return [out_lo + (v - lo) / span * (out_hi - out_lo) for v in values]


def _path(xs: list[float], ys: list[float]) -> str:
    return " ".join(f"{'M' if i == 0 else 'L'}{x:.2f},{y:.2f}" for i, (x, y) in enumerate(zip(xs, ys, strict=True)))


def _frame(title: str, x_label: str, y_label: str, x_max: float, y_max: float, y_ticks: list[float]) -> list[str]:
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{HEIGHT}" viewBox="0 0 {WIDTH} {HEIGHT}" '
        'font-family="sans-serif" font-size="11">',
        f'<title>{escape(title)}</title>',
        f'<rect x="0" y="0" width="{WIDTH}" height="{HEIGHT}" fill="#ffffff"/>',
        f'<text x="{WIDTH / 2:.0f}" y="16" text-anchor="middle" font-size="13">{escape(title)}</text>',
        f'<line x1="{LEFT}" y1="{HEIGHT - BOTTOM}" x2="{WIDTH - RIGHT}" y2="{HEIGHT - BOTTOM}" stroke="#333"/>',
        f'<line x1="{LEFT}" y1="{TOP}" x2="{LEFT}" y2="{HEIGHT - BOTTOM}" stroke="#333"/>',
        f'<text x="{(LEFT + WIDTH - RIGHT) / 2:.0f}" y="{HEIGHT - 8}" text-anchor="middle">{escape(x_label)}</text>',
        f'<text x="14" y="{(TOP + HEIGHT - BOTTOM) / 2:.0f}" text-anchor="middle" '
        f'transform="rotate(-90 14 {(TOP + HEIGHT - BOTTOM) / 2:.0f})">{escape(y_label)}</text>',
    ]
    for tick in y_ticks:
        y = _scale([tick], 0, y_max, HEIGHT - BOTTOM, TOP)[0]
        parts.append(f'<line x1="{LEFT - 4}" y1="{y:.2f}" x2="{WIDTH - RIGHT}" y2="{y:.2f}" stroke="#eee"/>')
        parts.append(f'<text x="{LEFT - 6}" y="{y + 4:.2f}" text-anchor="end">{tick:g}</text>')
    for i in range(5):
        value = x_max * i / 4
        x = _scale([value], 0, x_max, LEFT, WIDTH - RIGHT)[0]
        parts.append(f'<text x="{x:.2f}" y="{HEIGHT - BOTTOM + 16}" text-anchor="middle">{value:,.0f}</text>')
    return parts


def gain_svg(gain: dict[str, Any], target: float | None, title: str) -> str:
    """Recall (relevant found / estimated R) against depth, the interval band from R's bounds, the target line
    and the depth markers. Without an estimate of R, relevant found is plotted instead."""
    depth: list[float] = [float(d) for d in gain.get("depth", [])]
    found: list[float] = [float(f) for f in gain.get("found", [])]
    r_point = gain.get("relevant_estimate")
    x_max = float(max(depth[-1] if depth else 1.0, *[m["conservative"] or 0 for m in gain.get("markers", [])],
                      *[m["depth"] or 0 for m in gain.get("markers", [])], 1.0))
    if r_point:
        y_max, label = 1.0, "recall (estimated)"
        ys = [f / r_point for f in found]
    else:
        y_max, label = max(found[-1] if found else 1.0, 1.0), "relevant found"
        ys = found
    parts = _frame(title, "documents reviewed (rank)", label, x_max, y_max,
                   [0, 0.25, 0.5, 0.75, 1.0] if r_point else [0, y_max / 2, y_max])
    xs = _scale(depth, 0, x_max, LEFT, WIDTH - RIGHT)
    if r_point and gain.get("relevant_upper") and gain.get("relevant_lower"):
        upper_r, lower_r = float(gain["relevant_upper"]), float(gain["relevant_lower"])
        top = _scale([min(f / lower_r, 1.0) for f in found], 0, y_max, HEIGHT - BOTTOM, TOP)
        bottom = _scale([f / upper_r for f in found], 0, y_max, HEIGHT - BOTTOM, TOP)
        band = _path(xs + xs[::-1], top + bottom[::-1]) + " Z"
        parts.append(f'<path d="{band}" fill="#9ecae1" fill-opacity="0.5" stroke="none"/>')
    parts.append(f'<path d="{_path(xs, _scale(ys, 0, y_max, HEIGHT - BOTTOM, TOP))}" fill="none" '
                 'stroke="#08519c" stroke-width="1.5"/>')
    if r_point and target is not None:
        y = _scale([target], 0, y_max, HEIGHT - BOTTOM, TOP)[0]
        parts.append(f'<line x1="{LEFT}" y1="{y:.2f}" x2="{WIDTH - RIGHT}" y2="{y:.2f}" stroke="#d62728" '
                     'stroke-dasharray="4 3"/>')
        parts.append(f'<text x="{WIDTH - RIGHT - 2}" y="{y - 4:.2f}" text-anchor="end" fill="#d62728">'
                     f'target {target:g}</text>')
    for marker in gain.get("markers", []):
        for key, colour in (("depth", "#2ca02c"), ("conservative", "#ff7f0e")):
            value = marker.get(key)
            if value:
                x = _scale([float(value)], 0, x_max, LEFT, WIDTH - RIGHT)[0]
                parts.append(f'<line x1="{x:.2f}" y1="{TOP}" x2="{x:.2f}" y2="{HEIGHT - BOTTOM}" stroke="{colour}" '
                             f'stroke-dasharray="2 2"><title>{key} depth for recall {marker.get("target")}: '
                             f'{value}</title></line>')
    parts.append("</svg>")
    return "\n".join(parts) + "\n"


def precision_recall_svg(pr: dict[str, Any], title: str) -> str:
    """Raw (sawtooth) and interpolated precision against recall over the reviewed prefix."""
    parts = _frame(title, "recall (estimated)", "precision", 1.0, 1.0, [0, 0.25, 0.5, 0.75, 1.0])
    recall = [float(v) for v in pr.get("recall", [])]
    if recall:
        xs = _scale([min(r, 1.0) for r in recall], 0, 1.0, LEFT, WIDTH - RIGHT)
        for key, colour, width in (("precision", "#9467bd", "1"), ("interpolated_precision", "#08519c", "1.8")):
            ys = _scale([float(v) for v in pr[key]], 0, 1.0, HEIGHT - BOTTOM, TOP)
            parts.append(f'<path d="{_path(xs, ys)}" fill="none" stroke="{colour}" stroke-width="{width}">'
                         f'<title>{key.replace("_", " ")}</title></path>')
    else:
        parts.append(f'<text x="{WIDTH / 2:.0f}" y="{HEIGHT / 2:.0f}" text-anchor="middle">'
                     'no estimate of R yet: nothing to plot</text>')
    parts.append("</svg>")
    return "\n".join(parts) + "\n"


def png_from_series(kind: str, gain: dict[str, Any], pr: dict[str, Any], target: float | None, title: str,
                    path: str) -> None:
    """PNG through matplotlib (Agg); raises ImportError with an install hint when it is missing."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError as exc:
        raise ImportError("PNG output needs matplotlib: pip install 'reviewdepth[png]' (SVG needs nothing)") from exc
    fig, ax = plt.subplots(figsize=(6.4, 3.6), dpi=100)
    if kind == "gain":
        r_point = gain.get("relevant_estimate")
        ys = [f / r_point for f in gain["found"]] if r_point else gain["found"]
        ax.plot(gain["depth"], ys, color="#08519c")
        if r_point and target is not None:
            ax.axhline(target, color="#d62728", linestyle="--")
        ax.set_xlabel("documents reviewed (rank)")
        ax.set_ylabel("recall (estimated)" if r_point else "relevant found")
    else:
        ax.plot(pr.get("recall", []), pr.get("precision", []), color="#9467bd", linewidth=1)
        ax.plot(pr.get("recall", []), pr.get("interpolated_precision", []), color="#08519c")
        ax.set_xlabel("recall (estimated)")
        ax.set_ylabel("precision")
    ax.set_title(title)
    fig.tight_layout()
    fig.savefig(path, format="png", metadata={"Software": None})
    plt.close(fig)
