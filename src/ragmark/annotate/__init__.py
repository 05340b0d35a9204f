"""``ragmark annotate``: people label a run's answers (or a label run's passages) on a
local web page; every label is kept in a store beside the run history the moment it is
given (:mod:`ragmark.annotate.store`), queues and who labels what in
:mod:`ragmark.annotate.queue`, the page's app in :mod:`ragmark.annotate.app`."""
