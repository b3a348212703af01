"""``classad query``: its command line, spelled as ``condor_status`` / ``condor_q`` spell it.

Options take one dash or two (``-af``, ``--af``), values after a space or ``=``,
and may come in any order with the file names.  An ``-af`` list runs to the next
word that starts with a dash or names an existing file (or pipe), so both
``query --af Name Cpus slots.ad`` and ``query slots.ad -af:h Name Cpus`` work.

Output shapes, as the HTCondor tools print them:

* ``-af[:qualifiers] EXPR...``: one line per ad, values separated by a space;
  strings as they are, other values in ClassAd syntax.  Qualifiers: ``h``
  headings (columns padded to the widest value), ``l`` label each value
  (``Name = value``), ``j`` the job id (``ClusterId.ProcId``) first, ``,`` a comma
  between values, ``t`` a tab instead of the space, ``n`` a newline between
  values, ``g`` a blank line between ads and no space, ``V`` strings quoted,
  ``r`` unevaluated expressions.
* ``-format FMT EXPR`` (repeatable): printf-style, one conversion per format
  (``%s %d %i %f %e %g %x %o %c %v %V %r``, with flags, width and precision);
  ``\\n`` and ``\\t`` in FMT are a newline and a tab; nothing else is added.  A
  format whose value is undefined is skipped.
* ``-l``/``-long`` (default), ``-new``, ``-json``, ``-xml``: whole ads.
"""

from __future__ import annotations

import argparse
import os
import re
from typing import Any, Iterable, Iterator, Optional, Sequence, TextIO

from . import ast, cli_grammar as grammar
from .ad import ClassAd, ExprTree
from .columnar.select import select_ads
from .errors import ParseError
from .printing.printers import OLD
from .unparse import unparse_old
from .values import ERROR, UNDEFINED, AbsTime, RelTime, Value

USAGE = "usage: classad query [OPTIONS] FILE... (options and files in any order)"

HELP = (
    USAGE
    + """

Print the ads of FILE... ('-' for stdin; any of the four formats) for which the
constraint is true, evaluated in each ad alone, as condor_status/condor_q would.
Options take one dash or two, and a value after a space or '='; they are never
abbreviated.

  -constraint EXPR, -c EXPR   keep ads where EXPR is true
  -af[:hjl,tngVr] EXPR...     print these attributes or expressions, one line per ad
  -autoformat[:...] EXPR...   the same; the list ends at the next word that starts
                              with '-' or names an existing file or pipe (so files may come
                              before or after it)
        qualifiers: h  column headings (columns padded to the widest value)
                    j  the job id (ClusterId.ProcId) first
                    l  label each value: Name = value
                    ,  a comma after each value but the last
                    t  a tab before each value instead of a space
                    n  a newline after each value but the last
                    g  a blank line between ads, no space between values
                    V  strings quoted;  r  expressions unevaluated
  -format FMT EXPR            printf-style output of EXPR (repeatable); \\n in FMT is
                              a newline; a format whose value is undefined is skipped
  -sort EXPR                  order the ads by EXPR, ascending (repeatable: the first
                              is the primary key); numbers before strings (case-
                              insensitive) before anything else
  -limit N                    print at most N ads
  -attributes A,B,...         with whole ads, print only these attributes
  -l, -long                   whole ads in old format (the default)
  -new, -json, -xml           whole ads in new, JSON or XML format
  -from FORMAT                input format: auto (default), old, new, json, xml
  -k, -keep-going             report broken ads and go on (exit status 1 at the end)
  -h, -help                   show this help
"""
)

INPUT_FORMATS = ("auto", "old", "new", "json", "xml")


PROG = "classad query"


class QueryUsageError(grammar.UsageError):
    """A bad ``classad query`` command line (one line, exit status 2)."""

    def __init__(self, message: str) -> None:
        super().__init__(message, PROG)


# option name -> takes a value; spelled out in full (never abbreviated), one dash or two
_OPTIONS = {
    "constraint": True,
    "c": True,
    "sort": True,
    "limit": True,
    "format": False,
    "attributes": True,
    "long": False,
    "l": False,
    "new": False,
    "json": False,
    "xml": False,
    "from": True,
    "keep-going": False,
    "k": False,
    "help": False,
    "h": False,
}
_AF = re.compile(r"^(af|autoformat)(?::(.*))?$")


def _option_name(word: str) -> str:
    """The option a dashed word names, or a :class:`QueryUsageError`."""
    if word in _OPTIONS:
        return word
    raise QueryUsageError(f"unknown option -{word}")


def _names_input(word: str) -> bool:
    """Whether ``word`` names something to read: a file, a pipe or FIFO (``<(cmd)``)."""
    return os.path.exists(word) and not os.path.isdir(word)


def parse_args(argv: Sequence[str]) -> argparse.Namespace:
    """The query options from ``argv`` (the words after ``query``)."""
    return _QueryWords(argv).parse()


class _QueryWords:
    """The words of a ``classad query`` command line, read left to right into a namespace.

    Files may stand anywhere; an option is spelled in full with one dash or two, its
    value after ``=`` or as the next word; an ``-af`` list ends at the next word that
    starts with ``-`` or names something to read."""

    def __init__(self, argv: Sequence[str]) -> None:
        self.words = list(argv)
        self.i = 0
        self.ns = argparse.Namespace(
            files=[],
            constraint=None,
            af=None,
            af_opts="",
            formats=[],
            sort=[],
            limit=None,
            output="old",
            input_format="auto",
            keep_going=False,
            attributes=[],
        )

    def parse(self) -> argparse.Namespace:
        while self.i < len(self.words):
            word = self.take()
            if word == "-" or not word.startswith("-"):
                self.ns.files.append(word)
                continue
            body = word.lstrip("-")
            value: Optional[str] = None
            if "=" in body:
                body, value = body.split("=", 1)
            m = _AF.match(body)
            if m:
                if value is not None:
                    raise QueryUsageError(f"{word}: -af takes its expressions as separate words")
                self.autoformat(m.group(2) or "")
            else:
                self.option(_option_name(body), value)
        if not self.ns.files:
            raise QueryUsageError("no input file ('-' reads stdin)")
        return self.ns

    def take(self) -> str:
        word = self.words[self.i]
        self.i += 1
        return word

    def autoformat(self, qualifiers: str) -> None:
        """``-af[:qualifiers] EXPR...``: the qualifiers checked, then the expressions."""
        bad = set(qualifiers) - set("hjl,tngVr")
        if bad:
            raise QueryUsageError(f"-af: unknown qualifier {''.join(sorted(bad))!r}")
        if "l" in qualifiers and "h" in qualifiers:
            raise QueryUsageError("-af: the l and h qualifiers cannot be used together")
        if "n" in qualifiers and "," in qualifiers:
            raise QueryUsageError("-af: the n and , qualifiers cannot be used together")
        ns = self.ns
        ns.af_opts = qualifiers
        ns.af = ns.af or []
        while (
            self.i < len(self.words) and not self.words[self.i].startswith("-") and not _names_input(self.words[self.i])
        ):
            ns.af.append(self.take())
        if not ns.af:
            raise QueryUsageError("-af needs at least one attribute or expression")

    def option(self, name: str, value: Optional[str]) -> None:
        if name in ("help", "h"):
            raise grammar.HelpRequested(HELP)
        if name == "format":
            self.format_option(value)
        elif not _OPTIONS[name]:
            self.flag(name, value)
        else:
            if value is None:
                if self.i >= len(self.words):
                    raise QueryUsageError(f"-{name} needs a value")
                value = self.take()
            self.valued(name, value)

    def format_option(self, value: Optional[str]) -> None:
        """``-format FMT EXPR`` (or ``-format=FMT EXPR``)."""
        args = [] if value is None else [value]
        while len(args) < 2 and self.i < len(self.words):
            args.append(self.take())
        if len(args) < 2:
            raise QueryUsageError("-format needs a format and an expression")
        self.ns.formats.append((args[0], args[1]))

    def flag(self, name: str, value: Optional[str]) -> None:
        """An option without a value: an output format, or keep-going."""
        if value is not None:
            raise QueryUsageError(f"-{name} takes no value")
        if name in ("long", "l"):
            self.ns.output = "old"
        elif name in ("new", "json", "xml"):
            self.ns.output = name
        else:
            self.ns.keep_going = True

    def valued(self, name: str, value: str) -> None:
        """An option with its value."""
        ns = self.ns
        if name in ("constraint", "c"):
            ns.constraint = value if ns.constraint is None else f"({ns.constraint}) && ({value})"
        elif name == "sort":
            ns.sort.append(value)
        elif name == "attributes":
            ns.attributes += [a.strip() for a in value.split(",") if a.strip()]
        elif name == "limit":
            try:
                ns.limit = int(value)
            except ValueError:
                raise QueryUsageError(f"-limit needs a number, not {value!r}") from None
        else:  # from
            if value not in INPUT_FORMATS:
                raise QueryUsageError(f"-from must be one of {', '.join(INPUT_FORMATS)}")
            ns.input_format = value


def print_help(out: TextIO) -> None:
    """The ``classad query --help`` text."""
    out.write(HELP)


# ---- selecting and ordering -------------------------------------------------------------------


def parse_expr_arg(text: str, label: str) -> ExprTree:
    """An expression from the command line; syntax errors name the option."""
    try:
        return ExprTree(text)
    except ParseError as exc:
        raise ParseError(exc.message, file=label, line=exc.line, column=exc.column) from None


def _sort_key(value: Any) -> tuple:
    t = type(value)
    if t is bool or t is int or t is float:
        return (0, float(value), "")
    if t is str:
        return (1, 0.0, value.lower())
    return (2, 0.0, "")


def select(
    ads: Iterable[ClassAd], constraint: Optional[ExprTree], sort: Sequence[ExprTree], limit: Optional[int]
) -> Iterator[ClassAd]:
    """The ads where ``constraint`` is true, ordered by ``sort``, at most ``limit`` of them."""
    # The columnar engine filters whole batches of ads at once, with the same answers.
    chosen: Iterable[ClassAd] = ads if constraint is None else select_ads(constraint, ads)
    if sort:
        chosen = sorted(chosen, key=lambda ad: tuple(_sort_key(e.evaluate(ad)) for e in sort))
    for count, ad in enumerate(chosen):
        if limit is not None and count >= limit:
            return
        yield ad


def project(ads: Iterable[ClassAd], names: Sequence[str]) -> Iterator[ClassAd]:
    """``-attributes``: each ad with only the named attributes it has (names compared
    without regard to case, as attribute names are)."""
    wanted = {n.lower() for n in names}
    for ad in ads:
        kept = ClassAd()
        for name, node in ad.node_items():
            if name.lower() in wanted:
                kept.set_node(name, node)
        yield kept


# ---- -af ---------------------------------------------------------------------------------------


def autoformat(value: Any, quoted: bool = False) -> str:
    """One ``-af`` value: strings as they are (quoted with ``V``), others in old syntax."""
    return value if type(value) is str and not quoted else OLD.value(value)


def _raw(ad: ClassAd, tree: ExprTree) -> str:
    """The unevaluated text of a column (``r``): an attribute's own expression."""
    node = tree.node
    if type(node) is ast.AttrRef:
        found = ad.get_node(node.name)
        if found is None:
            return "undefined"
        node = found
    return unparse_old(node)


_CLUSTER_ID, _PROC_ID = ExprTree("ClusterId"), ExprTree("ProcId")


def _job_id(ad: ClassAd) -> str:
    """The ``j`` column: ``ClusterId.ProcId`` printed as ``-format "%d" ClusterId -format
    ".%d" ProcId`` prints it, so a part that is undefined is left out (a slot ad's id is empty)."""
    return format_one("%d", _CLUSTER_ID, ad) + format_one(".%d", _PROC_ID, ad)


def write_autoformat(ads: Iterable[ClassAd], texts: Sequence[str], opts: str, out: TextIO) -> None:
    """Print ``-af[:opts]`` rows for ``ads``."""
    columns = [parse_expr_arg(t, f"<af{i}>") for i, t in enumerate(texts, start=1)]
    labels = list(texts)
    if "j" in opts:
        labels.insert(0, "ID")
    col_pre = None if "g" in opts else ("\t" if "t" in opts else " ")
    col_post = "," if "," in opts else ("\n" if "n" in opts else None)
    row_pre = "\n" if "g" in opts else ""

    def cells(ad: ClassAd) -> list[str]:
        row = [_job_id(ad)] if "j" in opts else []
        for tree in columns:
            if "r" in opts:
                row.append(_raw(ad, tree))
            else:
                row.append(autoformat(tree.evaluate(ad), quoted="V" in opts))
        if "l" in opts:
            row = [f"{label} = {cell}" for label, cell in zip(labels, row)]
        return row

    def line(row: list[str], widths: Optional[list[int]] = None) -> str:
        parts = []
        for i, cell in enumerate(row):
            if i and col_pre:
                parts.append(col_pre)
            parts.append(cell.ljust(widths[i]) if widths else cell)
            if col_post and i < len(row) - 1:
                parts.append(col_post)
        return row_pre + "".join(parts) + "\n"

    if "h" not in opts:
        for ad in ads:
            out.write(line(cells(ad)))
        return
    heads = [(" ID" if label == "ID" and "j" in opts and n == 0 else label) for n, label in enumerate(labels)]
    rows = [cells(ad) for ad in ads]
    widths = [max([len(h)] + [len(r[i]) for r in rows]) for i, h in enumerate(heads)]
    out.write(line(heads, widths))
    for row in rows:
        out.write(line(row, widths))


# ---- -format -------------------------------------------------------------------------------------

_SPEC = re.compile(r"%([-+ #0]*)(\d+)?(?:\.(\d+))?(?:hh|h|ll|l|L|q|j|z|t)?([diouxXeEfFgGcsvVr%])")


def _expand_escapes(fmt: str) -> str:
    return fmt.replace("\\n", "\n").replace("\\t", "\t")


def _convert(letter: str, value: Any, tree: ExprTree, ad: ClassAd) -> Optional[Any]:
    """The argument for one printf conversion, or None to skip the format."""
    if letter == "r":
        return _raw(ad, tree)
    if value is UNDEFINED:
        return None
    if letter == "v":
        return autoformat(value)
    if letter == "V":
        return autoformat(value, quoted=True)
    t = type(value)
    if letter == "s":
        return value if t is str else autoformat(value)
    if isinstance(value, (AbsTime, RelTime)):
        value = value.secs
        t = type(value)
    if value is ERROR or isinstance(value, Value):
        return None
    if letter in "dioxXuc":
        if t is bool or t is int:
            return int(value)
        if t is float:
            return int(value) if value == value and abs(value) != float("inf") else None
        return None
    if t is bool or t is int or t is float:
        return float(value)
    return None


def format_one(fmt: str, tree: ExprTree, ad: ClassAd) -> str:
    """``fmt`` filled with the value of ``tree`` in ``ad`` ("" when the format is skipped)."""
    fmt = _expand_escapes(fmt)
    value = None if "%" not in fmt else tree.evaluate(ad)
    pieces: list[str] = []
    pos = 0
    for m in _SPEC.finditer(fmt):
        pieces.append(fmt[pos : m.start()])
        pos = m.end()
        flags, width, prec, letter = m.groups()
        if letter == "%":
            pieces.append("%")
            continue
        arg = _convert(letter, value, tree, ad)
        if arg is None:
            return ""
        py_letter = {"v": "s", "V": "s", "r": "s", "u": "d", "i": "d"}.get(letter, letter)
        spec = "%" + flags + (width or "") + ("." + prec if prec is not None else "") + py_letter
        try:
            pieces.append(spec % arg)
        except (TypeError, ValueError, OverflowError):
            return ""
    pieces.append(fmt[pos:])
    return "".join(pieces)


# The widest field and the longest precision a -format conversion may ask for: printf
# would build the field whatever its size (``%999999999d`` is a gigabyte per ad).
MAX_FORMAT_WIDTH = 4096


def check_format(fmt: str) -> None:
    """``QueryUsageError`` for a conversion wider or more precise than :data:`MAX_FORMAT_WIDTH`."""
    for m in _SPEC.finditer(_expand_escapes(fmt)):
        for part in (m.group(2), m.group(3)):
            if part is not None and int(part) > MAX_FORMAT_WIDTH:
                raise QueryUsageError(
                    f"-format {fmt!r}: {m.group(0)!r} asks for {int(part):,} characters; "
                    f"at most {MAX_FORMAT_WIDTH} are allowed"
                )


def write_formats(ads: Iterable[ClassAd], formats: Sequence[tuple[str, str]], out: TextIO) -> None:
    """Print every ``-format FMT EXPR`` for each ad, nothing else."""
    for fmt, _ in formats:
        check_format(fmt)
    trees = [(fmt, parse_expr_arg(expr, f"<format{i}>")) for i, (fmt, expr) in enumerate(formats, start=1)]
    for ad in ads:
        out.write("".join(format_one(fmt, tree, ad) for fmt, tree in trees))
