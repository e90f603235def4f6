"""The methods text of issue 41 ("Show"; not run in CI: tests/services/test_methods_text.py checks the same path).

SYNERGY's ADHD review (Cohen 2006; 851 records, 20 included), ranked by a simulated model (score = 3 × label plus
standard normal noise, seed 41: SYNERGY ships no ranking), the first 300 records screened in rank order by two
reviewers (ana, ben), then a random sample of 480 of the unscreened rest coded by a third (cleo): the state the
test builds. Prints `reviewdepth methods ADHD --style STYLE` for each style asked.

    python bench/methods_demo.py --db sqlite:////tmp/adhd.db [--style prisma raise]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from typer.testing import CliRunner

from reviewdepth.cli.app import create_cli
from reviewdepth.store.engine import create_engine_for

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--db", required=True, help="a database URL for a fresh store")
    parser.add_argument("--style", nargs="*", default=["prisma"])
    args = parser.parse_args(argv)
    from reviewdepth.store.migrate import upgrade
    from tests.services.test_methods_text import synergy_certified_stop

    engine = create_engine_for(args.db)
    upgrade(engine)
    synergy_certified_stop(engine)
    for style in args.style:
        done = CliRunner().invoke(create_cli(), ["methods", "ADHD", "--style", style, "--db", args.db])
        print(done.stdout)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
