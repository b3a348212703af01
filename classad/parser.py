"""Text to expression trees: the hand-written parser, the Lark LALR parser behind it, and the parse cache.

Every text first goes to :mod:`classad.descent`, which reads valid text fast and
gives up on anything else; only then does Lark run (:mod:`classad.grammar_parser`,
loaded on first need), as the reference grammar and the one place syntax errors
are reported.  Its refusals are re-raised here as :class:`~classad.errors.ParseError`
with file, line, column, the text and what was expected.

``parse_expr`` is cached by source text: identical text parses once and every ad
holding it shares one tree.
"""

from __future__ import annotations

import functools
import re
from typing import Any, Optional

from . import ast, descent, lexemes
from .bulk import collector_paused
from .errors import ParseError
from .lexemes import KEYWORDS
from .limits import LIMITS
from .records import split_attributes

# Nesting deeper than this is a parse error, not a RecursionError (the C++ parser
# stops at 500 levels of recursion).
MAX_DEPTH = 500

_TRUE, _FALSE, _UNDEF, _ERROR = lexemes.TRUE, lexemes.FALSE, lexemes.UNDEF, lexemes.ERROR_LITERAL
_to_int, _to_real = lexemes.to_int, lexemes.to_real


def _caret(text: str, line: int, column: int) -> str:
    lines = text.splitlines() or [""]
    src = lines[line - 1] if 0 < line <= len(lines) else ""
    if len(src) > 200:
        start = max(0, column - 100)
        src = src[start : start + 200]
        column -= start
    return src + "\n" + " " * max(0, column - 1) + "^"


# Strings, quoted names and brackets: what the size and nesting pre-check looks at.
_SCAN = re.compile(r'"(?:[^"\\]|\\.)*"|\'(?:[^\'\\]|\\.)*\'|[\[\](){}]', re.S)
_PRECHECK_FROM = 1 << 16  # shorter texts parse quickly whatever they hold


def _precheck(text: str, limit: int, source: Optional[str], line_offset: int) -> None:
    """Refuse, before the slow parser runs, text that is too long or nested too deeply.

    String literals do not count towards ``limit``: a long string is one token.
    """
    code = len(text)
    depth = 0
    for m in _SCAN.finditer(text):
        c = m.group()
        if len(c) > 1 or c in "\"'":
            code -= len(c)
        elif c in "([{":
            depth += 1
            if depth > MAX_DEPTH:
                raise _error(
                    text,
                    f"expression nested more than {MAX_DEPTH} levels deep",
                    text.count("\n", 0, m.start()) + 1,
                    m.start() - text.rfind("\n", 0, m.start()),
                    source,
                    line_offset,
                )
        else:
            depth -= 1
    if code > limit:
        raise ParseError(
            f"expression text longer than {limit} characters (outside strings)",
            file=source,
            line=None if source is None else 1 + line_offset,
        )


def _parse(text: str, start: str, old_strings: bool, source: Optional[str], line_offset: int = 0) -> Any:
    if len(text) > _PRECHECK_FROM:
        _precheck(text, LIMITS.max_ad if start == "classad" else LIMITS.max_expr, source, line_offset)
    fast = descent.parse(text, start, old_strings, MAX_DEPTH)
    if fast is descent.TOO_DEEP:  # valid, but deeper than the evaluator may go: no need for Lark's view
        raise ParseError(f"expression nested more than {MAX_DEPTH} levels deep", file=source)
    if fast is not None:
        return fast
    # Lark is loaded only now, for the text the fast parser leaves (refusals, their messages).
    from .grammar_parser import GrammarError, parse_with_grammar

    try:
        result = parse_with_grammar(text, start, old_strings)
    except GrammarError as exc:
        raise _error(text, exc.message, exc.line, exc.column, source, line_offset) from None
    tree: Any = result[1] if start == "old_line" else result  # type: ignore[index]
    _check_depth(tree, text, source)
    return result


def _error(
    text: str, message: str, line: Optional[int], column: Optional[int], source: Optional[str], line_offset: int
) -> ParseError:
    context = _caret(text, line, column) if line is not None and column is not None else None
    return ParseError(
        message, file=source, line=None if line is None else line + line_offset, column=column, context=context
    )


def _check_depth(node: ast.Node, text: str, source: Optional[str]) -> None:
    """Reject trees nested deeper than MAX_DEPTH without recursing."""
    # Cheap pre-check: a tree can only be deep if the text has many openers or operators.
    if len(text) >= MAX_DEPTH and descent.deeper_than(node, MAX_DEPTH):
        raise ParseError(f"expression nested more than {MAX_DEPTH} levels deep", file=source)


# ---- public entry points ------------------------------------------------------


# Most values in ad files are plain literals; these patterns recognise exactly the
# token forms of the grammar (see INT, REAL and STRING there), so such values skip
# Lark without changing what they mean.
_FAST_INT = re.compile(r"-?(?:0|[1-9][0-9]*)\Z")
_FAST_REAL = re.compile(r"-?(?:[0-9]+\.[0-9]+(?:[eE][+-]?[0-9]+)?|[0-9]+[eE][+-]?[0-9]+)\Z")
_FAST_STRING = re.compile(r'"[^"\\\n\0]*"\Z')
_FAST_WORDS = {"true": _TRUE, "false": _FALSE, "undefined": _UNDEF, "error": _ERROR}


def fast_literal(text: str) -> Optional[ast.Node]:
    """The node of ``text`` when it is one simple literal, else None (use the full parser)."""
    text = text.strip(" \t")
    if not text:
        return None
    first = text[0]
    if first == '"':
        if _FAST_STRING.match(text):  # no escapes: the body is the value, in both syntaxes
            return ast.Literal(text[1:-1])
        return None
    if first.isdigit() or first == "-":
        if _FAST_INT.match(text):
            return ast.Literal(_to_int(text))
        if _FAST_REAL.match(text):
            return ast.Literal(_to_real(text))
        return None
    return _FAST_WORDS.get(text.lower())


@functools.lru_cache(maxsize=65536)
def parse_expr(text: str) -> ast.Node:
    """Parse one expression; identical text returns the identical (shared) tree."""
    fast = fast_literal(text)
    if fast is not None:
        return fast
    node = _parse(text, "expr", False, None)
    return node


@functools.lru_cache(maxsize=65536)
def parse_old_value(text: str) -> ast.Node:
    """Parse the value of an old-format ``Name = value`` line (old string escapes)."""
    fast = fast_literal(text)
    if fast is not None:
        return fast
    node = _parse(text, "expr", True, None)
    return node


# Ads up to this size are read value by value through the expression cache, so values
# that repeat from ad to ad share one tree; a larger one is one record parsed in a single
# pass, which is faster and has little to share.
SHARE_VALUES_UP_TO = 1 << 18


def parse_record(text: str, source: Optional[str] = None) -> ast.Record:
    """Parse a whole ``[ ... ]`` ad.

    An ad of a few kilobytes is first read value by value (each through the
    expression cache); anything that path cannot read, and any very large ad,
    goes to the full parser (the fast one, then Lark).
    """
    if 4096 < len(text) <= SHARE_VALUES_UP_TO:
        body = text.strip(" \t\n\r\f\v")
        pairs = split_attributes(body, parse_expr, KEYWORDS, whole=True) if body[:1] == "[" else None
        if pairs is not None:
            return ast.Record(pairs)
    if len(text) > SHARE_VALUES_UP_TO:
        with collector_paused():
            return _parse(text, "classad", False, source)
    return _parse(text, "classad", False, source)


def parse_full_expr_lenient(text: str) -> ast.Node:
    """Parse as the C++ ``eval()`` function does: a top-level ternary may be followed by junk.

    ``eval("1 ? 2 : 3 junk")`` is 2 in HTCondor, while ``eval("1 + 2 3")`` is an error.
    """
    try:
        return parse_expr(text)
    except ParseError as exc:
        error = exc
    # Find the longest prefix that parses as a ternary, cutting at token boundaries.
    if error.line is None or error.column is None:
        raise error
    lines = text.splitlines(keepends=True)
    offset = sum(len(l) for l in lines[: error.line - 1]) + error.column - 1
    prefix = text[:offset]
    try:
        node = parse_expr(prefix)
    except ParseError:
        raise error from None
    if isinstance(node, ast.Conditional):
        return node
    raise error
