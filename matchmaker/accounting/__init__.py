"""The accountant: user-priority math as pure functions (:mod:`.priority_math`: decay,
RUP, EUP, priority factors), the durable SQLite store of customers, claims and quotas
(:mod:`.store`) and what ``condor_userprio`` shows and edits (:mod:`.reports`).  Imports
only :mod:`matchmaker.errors` and :mod:`matchmaker.groups`."""
