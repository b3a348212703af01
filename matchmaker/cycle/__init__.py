"""One negotiation cycle: the ephemeral attributes put on ads (:mod:`.ephemeral`), pair
evaluation (:mod:`.evaluator`), candidate selection and ranking (:mod:`.matching`), the
cycle's state (:mod:`.state`), the pie and its spins (:mod:`.pie`), group-quota passes
(:mod:`.group_passes`), results (:mod:`.results`), the entry point (:mod:`.negotiator`)
and cycles against the accountant store (:mod:`.session`).  Imports every layer below it."""
