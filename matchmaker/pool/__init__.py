"""The pool of one cycle: ad files to slots, jobs and submitters (:mod:`.ads`),
autoclusters and the schedd's job order (:mod:`.autocluster`), and concurrency limits
(:mod:`.limits`).  Imports the layers below it: errors, groups, accounting, config."""
