"""Configuration: HTCondor's configuration language (:mod:`.language` for the macro table,
:mod:`.statements` for the statements of one file), the one table of knobs with types and
defaults (:mod:`.knobs`), the priority models' parameters as typed records
(:mod:`.policy_params`) read and checked from their knobs (:mod:`.policy_settings`,
:mod:`.maui_settings`), and the typed :class:`~.settings.Settings` one cycle reads
(:mod:`.settings`).  Nothing outside this package reads configuration values except
``lint``, which inspects the raw text on purpose.  Imports the layers below it: errors,
groups, accounting."""
