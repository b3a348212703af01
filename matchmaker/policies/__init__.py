"""Priority policies: who is served first, by the rules of other batch systems.

Each model has a module of pure math (:mod:`.htcondor`, :mod:`.lsf`, :mod:`.maui`,
:mod:`.dirac`, :mod:`.slurm`) with its parameters and their documented defaults;
:mod:`.params` (with :mod:`.maui_knobs` for Maui's many per-name knobs) reads those
parameters from the configuration knobs, and :mod:`.runners` picks the runner
(:mod:`.lsf_runner`, :mod:`.maui_runner`, :mod:`.dirac_runner`, :mod:`.slurm_runner`), the
object the negotiation cycle asks for an order of jobs.  Matching itself (Requirements,
Rank, limits, preemption) stays in :mod:`matchmaker.cycle`.  Imports
:mod:`matchmaker.errors`, :mod:`matchmaker.config`, :mod:`matchmaker.pool` and
:mod:`matchmaker.accounting`, never the cycle.
"""
