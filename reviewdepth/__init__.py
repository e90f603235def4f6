"""reviewdepth: review depth to target recall, with trec_eval-exact measures underneath."""

__version__ = "0.1.0"
