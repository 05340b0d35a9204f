"""Attacks through the corpus (``ragmark probe``): documents planted in a copy of the
corpus for target questions — indirect prompt injection, knowledge poisoning,
exfiltration, leakage of private documents — and how often each is retrieved and
succeeds, per config, with intervals, comparisons and gates.

:mod:`~ragmark.probe.attacks` plants, :mod:`~ragmark.probe.success` tests success
exactly, :mod:`~ragmark.probe.overlay` makes the corpus with them,
:mod:`~ragmark.probe.rates` reads one target and gives the rates,
:mod:`~ragmark.probe.plan` decides a probe, :mod:`~ragmark.probe.execute` runs it,
:mod:`~ragmark.probe.external` serves a system ragmark does not run,
:mod:`~ragmark.probe.report` and :mod:`~ragmark.probe.html` say what it found."""
