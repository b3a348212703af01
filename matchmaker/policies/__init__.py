"""Priority policies: who is served first, by the rules of other batch systems.

Each model has a module of pure math (:mod:`.htcondor`, :mod:`.lsf`, :mod:`.maui`,
:mod:`.dirac`, :mod:`.slurm`); its parameters, with their documented defaults, are typed
records read from the configuration knobs by the configuration layer
(:mod:`matchmaker.config.policy_params`, :mod:`matchmaker.config.policy_settings`), so
nothing here reads raw configuration.  :mod:`.runners` picks the runner
(:mod:`.lsf_runner`, :mod:`.maui_runner`, :mod:`.dirac_runner`, :mod:`.slurm_runner`), the
object the negotiation cycle asks for an order of jobs.  Matching itself (Requirements,
Rank, limits, preemption) stays in :mod:`matchmaker.cycle`.  Imports
:mod:`matchmaker.errors`, :mod:`matchmaker.config`, :mod:`matchmaker.pool` and
:mod:`matchmaker.accounting`, never the cycle.
"""
