"""Percentages a person reads, never stated beyond what they are: a confidence of 0.999 is "99.9%", not "100%";
a chance of 0.996 is "99.6%"; a target of 0.975 is "97.5%" (a target printed as 98% would claim more recall).

The value is taken as its shortest decimal (``repr``), shown with the fewest decimals (0, 1 or 2) that state it
exactly, else cut (never rounded) at two decimals, downward by default: a confidence, a chance or a lower bound
is never printed above itself. ``up=True`` cuts upward, for an upper bound (an elusion rate's "at most")."""

from __future__ import annotations

import math
from fractions import Fraction

MAX_DECIMALS = 2


def percent(value: float | Fraction, *, up: bool = False, space: bool = False) -> str:
    """``value`` (a proportion) as a percentage text, e.g. ``0.95`` → ``95%``, ``0.999`` → ``99.9%``,
    ``0.99999`` → ``99.99%`` (``100%`` only for 1 itself); ``space``: ``95 %``."""
    exact = value if isinstance(value, Fraction) else Fraction(repr(float(value)))
    hundredths = exact * 100 * 10 ** MAX_DECIMALS
    cut = math.ceil(hundredths) if up else math.floor(hundredths)
    whole, part = divmod(cut, 10 ** MAX_DECIMALS)
    text = f"{whole}.{part:0{MAX_DECIMALS}d}".rstrip("0").rstrip(".") if part else str(whole)
    if cut < 0:  # a negative proportion (a difference): divmod floors; state it plainly
        text = f"-{percent(-exact, up=not up)[:-1]}"
    return f"{text} %" if space else f"{text}%"
