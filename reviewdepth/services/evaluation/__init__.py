"""Evaluation of runs against qrels as files: trec_eval's measures, the CLEF TAR measures, and comparisons of
systems (significance tests), with no topic of the store involved."""
