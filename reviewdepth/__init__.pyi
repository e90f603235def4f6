"""Type information of `reviewdepth` (its names load lazily at run time: `reviewdepth/__init__.py`)."""

from reviewdepth._library.client import Client as Client
from reviewdepth._library.evaluation import compare as compare
from reviewdepth._library.evaluation import evaluate as evaluate
from reviewdepth._library.results import ComparisonCell as ComparisonCell
from reviewdepth._library.results import ComparisonResult as ComparisonResult
from reviewdepth._library.results import EvaluationResult as EvaluationResult
from reviewdepth._library.results import ReviewResult as ReviewResult
from reviewdepth._library.review import assess as assess
from reviewdepth._library.review import depth as depth
from reviewdepth._library.review import monitor as monitor
from reviewdepth._library.review import plan as plan
from reviewdepth._library.review import sample_ranks as sample_ranks
from reviewdepth._library.simulation import simulate as simulate

__version__: str
__all__: list[str]
