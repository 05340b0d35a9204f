"""One plan, executed: a ``run`` or ``compare`` is decided once (:func:`plan_run`,
:func:`plan_compare`, from a :class:`RunRequest` or :class:`CompareRequest`), then
:func:`execute` runs it or :func:`estimate` dry-runs it. The command line, the Python API
and the pytest fixture are thin adapters of these."""

from ragmark.plan.build import plan_compare, plan_run
from ragmark.plan.execute import estimate, execute
from ragmark.plan.model import Gating, Options, Outcome, Plan, Targets
from ragmark.plan.request import CompareRequest, Request, RunRequest

__all__ = ["CompareRequest", "Gating", "Options", "Outcome", "Plan", "Request",
           "RunRequest", "Targets", "estimate", "execute", "plan_compare", "plan_run"]
