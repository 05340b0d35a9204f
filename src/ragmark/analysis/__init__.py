"""What is made of results after a run: the gates, the regression gate, diffs between
runs, the failures listed by ``inspect``, the review of answers, human labels' corrections.
Nothing here runs a pipeline."""
