"""Accounting groups: the quota tree, quota assignment, surplus sharing, allocation rounds
and group order (:mod:`.quotas`), and which group a submitter or job belongs to, including
accounting-group map files (:mod:`.membership`).  Pure functions over plain data; imports
only :mod:`matchmaker.errors` and :mod:`classad`."""
