"""Reviewing a policy before it is deployed: ``lint`` (mistakes in a configuration and
in the ads it will meet) and ``diff`` (what changes when one configuration replaces
another, for one cycle or over simulated time).

* :mod:`.findings` -- the finding record, its codes and severities, sorting and printing;
* :mod:`.names` -- the known knob names (the knob table and HTCondor's documented
  knobs, :file:`htcondor_knobs.txt`) and near-miss suggestions;
* :mod:`.recording` -- a configuration table that remembers every assignment;
* :mod:`.config_checks` -- knob names, macros, overrides, unused policy knobs, values;
* :mod:`.attributes` -- attribute references against the ads given;
* :mod:`.pool_clauses` -- ``&&`` clauses that nothing in the pool satisfies (columnar);
* :mod:`.group_checks` -- group quota mistakes;
* :mod:`.lint` -- the lint run;
* :mod:`.cycle_diff` and :mod:`.series_diff` -- one cycle, or two simulations, compared.

Imports ``classad`` and the matchmaker layers below it (errors ... analyze), never
``api`` or ``cli``.
"""

from .findings import CODES, Finding, LintReport

__all__ = ["CODES", "Finding", "LintReport"]
