"""The Jinja2 environment over reviewdepth/report/templates, shared by the HTML renderers."""

from __future__ import annotations

import functools
from typing import Any


@functools.cache
def templates() -> Any:
    """Autoescaped, strict about undefined names; built on first use (Jinja2 is imported only for HTML)."""
    from jinja2 import Environment, PackageLoader, StrictUndefined

    return Environment(loader=PackageLoader("reviewdepth.report", "templates"), autoescape=True,
                       undefined=StrictUndefined, trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=True)
