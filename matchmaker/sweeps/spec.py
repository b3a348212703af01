"""What a sweep runs: its variants, read from a TOML sweep file and ``--vary`` options.

A variant is the base inputs of ``simulate`` with some parameters changed: knob values
(any configuration knob, ``MATCHMAKER_PRIORITY_POLICY`` included), a set of priority
factors (``setfactor``), the ``seed`` and the job file (``jobs``, a job-stream variant).
A sweep file names them in two ways, which combine::

    [axes]                                   # the product of every axis
    PRIORITY_HALFLIFE = [86400, 604800]
    seed = [1, 2, 3]
    setfactor = [{}, {"bob@example.org" = 2}]
    jobs = ["steady.ad", "bursty.ad"]        # relative to the sweep file

    [[variant]]                              # an explicit list (each crossed with the axes)
    name = "slurm"
    MATCHMAKER_PRIORITY_POLICY = "slurm"

Everything here is checked before anything runs, and a mistake is a :class:`SweepError`
naming the file and line: TOML syntax, an empty axis, a name that is neither a knob
nor a macro of the base configuration, a value that does not have the knob's type.
"""

from __future__ import annotations

import copy
import itertools
import json
import os
import re
import tomllib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional

from classad.errors import ClassAdError

from ..config.knobs import check_setting
from ..config.language import Config

SEED, SETFACTOR, JOBS, NAME = "seed", "setfactor", "jobs", "name"
SPECIAL = (SEED, SETFACTOR, JOBS)
COMMAND_LINE = "<command line>"


class SweepError(ClassAdError):
    """A sweep file or ``--vary`` option that cannot be used (names file and line)."""

    kind = "sweep"


@dataclass(frozen=True)
class Setting:
    """One changed knob: its name, its value as configuration text, where it was written."""

    name: str
    text: str
    file: str
    line: Optional[int]


@dataclass(frozen=True)
class Variant:
    """One simulation of the sweep: the base inputs with ``knobs``, ``factors``, ``seed``
    and ``jobs`` changed (``None``: as in the base)."""

    name: str
    knobs: tuple[Setting, ...] = ()
    factors: tuple[tuple[str, float], ...] = ()
    seed: Optional[int] = None
    jobs: Optional[str] = None  # a job file replacing the base one

    def parameters(self) -> dict[str, Any]:
        """The variant's parameters as the columns of its rows (knob values as text)."""
        params: dict[str, Any] = {k.name: k.text for k in self.knobs}
        if self.factors:
            params[SETFACTOR] = " ".join(f"{n}={v:g}" for n, v in self.factors)
        if self.seed is not None:
            params[SEED] = self.seed
        if self.jobs is not None:
            params[JOBS] = self.jobs
        return params

    def identity(self) -> str:
        """The variant's parameters as canonical JSON (what makes it this variant)."""
        return json.dumps(
            [[k.name.upper(), k.text] for k in self.knobs] + [list(self.factors), self.seed, self.jobs], sort_keys=True
        )


@dataclass
class _Choice:
    """One value of one axis (or one explicit variant's part), before combination."""

    knobs: list[Setting] = field(default_factory=list)
    factors: dict[str, float] = field(default_factory=dict)
    seed: Optional[int] = None
    jobs: Optional[str] = None
    label: list[str] = field(default_factory=list)


# ---- reading ---------------------------------------------------------------------------------


def read_sweep_file(path: str | os.PathLike, config: Config) -> tuple[list[_Choice], list[list[_Choice]]]:
    """The explicit variants and the axes of a sweep file, checked against the base ``config``
    (:func:`combine` makes the variants)."""
    name = str(path)
    try:
        text = Path(path).read_bytes().decode("utf-8")
    except OSError as exc:
        raise SweepError(f"cannot read the sweep file: {exc.strerror or exc}", file=name) from None
    except UnicodeDecodeError:
        raise SweepError("the sweep file is not UTF-8 text", file=name) from None
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        m = re.search(r"\(at line (\d+), column (\d+)\)", str(exc))
        message = re.sub(r"\s*\(at line \d+, column \d+\)", "", str(exc)) or "not valid TOML"
        raise SweepError(
            f"TOML: {message}", file=name, line=int(m.group(1)) if m else None, column=int(m.group(2)) if m else None
        ) from None
    lines = _KeyLines(text)
    base = Path(path).resolve().parent
    unknown = sorted(set(doc) - {"axes", "variant"})
    if unknown:
        raise SweepError(
            f"unknown section {unknown[0]!r} (a sweep file has [axes] and [[variant]] tables)",
            file=name,
            line=lines.find(None, 0, unknown[0]),
        )
    axes = doc.get("axes", {})
    explicit = doc.get("variant", [])
    if not isinstance(axes, dict) or not isinstance(explicit, list):
        raise SweepError("[axes] must be a table and [[variant]] an array of tables", file=name)
    if not axes and not explicit:
        raise SweepError("no axes and no variants: nothing to sweep", file=name)
    reader = _Reader(config, name, lines, base)
    axis_choices = [reader.axis(key, values) for key, values in axes.items()]
    variant_choices = [reader.explicit(i, table) for i, table in enumerate(explicit)]
    return variant_choices, axis_choices


def vary_axes(vary: Mapping[str, Sequence[Any]], config: Config, source: str = COMMAND_LINE) -> list[list[_Choice]]:
    """Axes given as ``{name: [values]}`` (``--vary NAME=v1,v2``; ``seed`` and ``jobs`` too)."""
    reader = _Reader(config, source, None, Path.cwd())
    axes = []
    for key, values in vary.items():
        if key.lower() == SETFACTOR:
            raise SweepError("setfactor sets cannot be given with --vary; use a sweep file", file=source)
        items = [_seed_text(v) if key.lower() == SEED and isinstance(v, str) else v for v in values]
        axes.append(reader.axis(key, items))
    return axes


def parse_vary(options: Sequence[str]) -> dict[str, list[str]]:
    """``--vary NAME=v1,v2,...`` options as ``{name: [values]}`` (repeating a name adds values)."""
    out: dict[str, list[str]] = {}
    for option in options:
        key, eq, values = option.partition("=")
        key = key.strip()
        if not eq or not key:
            raise SweepError(f"--vary {option!r}: write NAME=value1,value2,...", file=COMMAND_LINE)
        out.setdefault(key, []).extend(v.strip() for v in values.split(",") if v.strip())
    return out


def combine(explicit: Sequence[_Choice], axes: Sequence[Sequence[_Choice]]) -> list[Variant]:
    """Every explicit variant (or the base, when there are none) crossed with every axis."""
    heads = list(explicit) or [_Choice()]
    variants = []
    for head in heads:
        for parts in itertools.product(*axes):
            variants.append(_merge([head, *parts]))
    seen: dict[str, str] = {}
    for v in variants:
        if v.identity() in seen:
            raise SweepError(
                f"variants {seen[v.identity()]!r} and {v.name!r} are the same simulation (an axis repeats a value?)",
                file=COMMAND_LINE,
            )
        seen[v.identity()] = v.name
    names = [v.name for v in variants]
    twice = next((n for n in names if names.count(n) > 1), None)
    if twice is not None:
        raise SweepError(f"two variants are named {twice!r}; give each a name of its own", file=COMMAND_LINE)
    return variants


def _merge(parts: Sequence[_Choice]) -> Variant:
    changed: dict[str, Setting] = {}
    factors: dict[str, float] = {}
    seed, jobs, label = None, None, []
    for p in parts:
        changed.update({k.name.upper(): k for k in p.knobs})
        factors.update(p.factors)
        seed = p.seed if p.seed is not None else seed
        jobs = p.jobs if p.jobs is not None else jobs
        label += p.label
    return Variant(" ".join(label) or "base", tuple(changed.values()), tuple(sorted(factors.items())), seed, jobs)


def _seed_text(text: str) -> Any:
    try:
        return int(text)
    except ValueError:
        return text  # refused with its line by the reader


# ---- checking ----------------------------------------------------------------------------------


class _KeyLines:
    """Where each key of a TOML text is written: ``(table, index, key) -> line`` (a light
    reading of the text for error messages; ``None`` when a key cannot be placed)."""

    _HEADER = re.compile(r"\s*(\[\[?)\s*([A-Za-z0-9_.-]+)\s*\]\]?")
    _KEY = re.compile(r"""\s*(?:"([^"]+)"|'([^']+)'|([A-Za-z0-9_.@-]+))\s*=""")

    def __init__(self, text: str) -> None:
        self.where: dict[tuple[Optional[str], int, str], int] = {}
        table: Optional[str] = None
        index = 0
        counts: dict[str, int] = {}
        for number, line in enumerate(text.splitlines(), 1):
            h = self._HEADER.match(line)
            if h:
                table = h.group(2)
                index = counts.get(table, 0) if h.group(1) == "[[" else 0
                counts[table] = index + 1
                self.where.setdefault((None, 0, table), number)
                continue
            k = self._KEY.match(line)
            if k:
                key = next(g for g in k.groups() if g is not None)
                self.where.setdefault((table, index, key), number)

    def find(self, table: Optional[str], index: int, key: str) -> Optional[int]:
        return self.where.get((table, index, key))


class _Reader:
    """Turns the TOML values of one source into checked choices."""

    def __init__(self, config: Config, file: str, lines: Optional[_KeyLines], base: Path) -> None:
        self.config, self.file, self.lines, self.base = config, file, lines, base

    def _line(self, table: Optional[str], index: int, key: str) -> Optional[int]:
        return self.lines.find(table, index, key) if self.lines is not None else None

    def _error(self, message: str, line: Optional[int]) -> SweepError:
        return SweepError(message, file=self.file, line=line)

    def axis(self, key: str, values: Any) -> list[_Choice]:
        line = self._line("axes", 0, key)
        if isinstance(values, tuple):
            values = list(values)
        if not isinstance(values, list):
            raise self._error(f"axis {key}: give a list of values ({key} = [a, b, ...])", line)
        if not values:
            raise self._error(f"axis {key} is empty: give it at least one value", line)
        return [self.choice(key, v, line) for v in values]

    def explicit(self, index: int, table: Any) -> _Choice:
        line = self._line(None, 0, "variant")
        if not isinstance(table, dict):
            raise self._error("each [[variant]] must be a table", line)
        out = _Choice()
        for key, value in table.items():
            at = self._line("variant", index, key)
            if key == NAME:
                if not isinstance(value, str) or not value.strip():
                    raise self._error("a variant's name must be a non-empty string", at)
                continue
            part = self.choice(key, value, at)
            out.knobs += part.knobs
            out.factors.update(part.factors)
            out.seed = part.seed if part.seed is not None else out.seed
            out.jobs = part.jobs if part.jobs is not None else out.jobs
            out.label += part.label
        if isinstance(table.get(NAME), str):
            out.label = [table[NAME].strip()]
        return out

    def choice(self, key: str, value: Any, line: Optional[int]) -> _Choice:
        low = key.lower()
        if low == SEED:
            if type(value) is not int or not 0 <= value < 2**63:
                raise self._error(f"seed: {value!r} is not a non-negative integer", line)
            return _Choice(seed=value, label=[f"seed={value}"])
        if low == JOBS:
            if not isinstance(value, str) or not value:
                raise self._error(f"jobs: {value!r} is not a file name", line)
            path = (self.base / value) if not Path(value).is_absolute() else Path(value)
            if not path.is_file():
                raise self._error(f"jobs: no such file {str(path)!r}", line)
            return _Choice(jobs=str(path), label=[f"jobs={Path(value).name}"])
        if low == SETFACTOR:
            return self._factors(value, line)
        text = self._knob_text(key, value, line)
        self._check_knob(key, text, line)
        return _Choice(knobs=[Setting(key, text, self.file, line)], label=[f"{key}={text}"])

    def _factors(self, value: Any, line: Optional[int]) -> _Choice:
        if not isinstance(value, dict):
            raise self._error(f"setfactor: give a table of NAME = factor, not {value!r}", line)
        factors = {}
        for name, f in value.items():
            if type(f) not in (int, float) or not (f == f and abs(f) != float("inf")) or f < 1:
                raise self._error(f"setfactor: the factor of {name!r} must be a finite number >= 1, not {f!r}", line)
            factors[name] = float(f)
        label = ",".join(f"{n}={f:g}" for n, f in sorted(factors.items())) or "none"
        return _Choice(factors=factors, label=[f"setfactor={label}"])

    def _knob_text(self, key: str, value: Any, line: Optional[int]) -> str:
        if type(value) is bool:
            return "true" if value else "false"
        if type(value) in (int, float):
            if value != value or abs(value) == float("inf"):
                raise self._error(f"{key}: {value!r} is not a finite number", line)
            return repr(value)
        if isinstance(value, str):
            if "\n" in value:
                raise self._error(f"{key}: a knob's value is one line", line)
            return value
        raise self._error(f"{key}: {value!r} is not a knob value (a string, number or boolean)", line)

    def _check_knob(self, key: str, text: str, line: Optional[int]) -> None:
        """The knob exists (or is a macro of the base configuration) and ``text`` has its type."""
        try:
            known = check_setting(self.config, key, text, self.file, line)
        except ClassAdError as exc:
            raise self._error(exc.message, line) from None
        if not known:
            raise self._error(f"{key} is not a knob (see docs/knobs.md) nor a macro of the configuration", line)


def apply_settings(config: Config, settings: Iterable[Setting]) -> Config:
    """A copy of ``config`` with the variant's knobs defined after everything else (as if
    appended to the configuration file)."""
    out = copy.deepcopy(config)
    for s in settings:
        out.define(s.name, s.text, s.file, s.line)
    return out


def factor_table(base: Mapping[str, float], variant: Variant) -> dict[str, float]:
    """The priority factors set before the first cycle: the base ones, then the variant's."""
    return {**base, **dict(variant.factors)}


__all__ = [
    "COMMAND_LINE",
    "SPECIAL",
    "Setting",
    "SweepError",
    "Variant",
    "apply_settings",
    "combine",
    "factor_table",
    "parse_vary",
    "read_sweep_file",
    "vary_axes",
]
