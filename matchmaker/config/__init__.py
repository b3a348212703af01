"""Configuration: HTCondor's configuration language (:mod:`.language` for the macro table,
:mod:`.statements` for the statements of one file), the one table of knobs with types and
defaults (:mod:`.knobs`) and the typed :class:`~.settings.Settings` one cycle reads
(:mod:`.settings`).  Imports the layers below it: errors, groups, accounting."""
