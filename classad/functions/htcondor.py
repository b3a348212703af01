"""HTCondor extension functions: ``evalInEachContext``, ``countMatches``, ``envV1ToV2``,
``mergeEnvironment``, ``argsToList``, ``listToArgs``, ``userHome`` and ``userMap``.

HTCondor registers these in every daemon and tool (and in the ``htcondor``
Python module).  The argument and environment helpers follow HTCondor's submit
syntax: V1 arguments are split on white space; V2 arguments use single quotes
(a doubled ``''`` is a literal quote); V2 environments are V2 argument lists of
``NAME=value`` entries, printed sorted by name.  No user maps are configured
here, so ``userMap`` only ever answers its default (or Undefined).
"""

from __future__ import annotations

from typing import Any, Iterator, Optional

from .. import ast
from ..values import ERROR, UNDEFINED, ListValue
from .common import find_attr, is_ad, iter_list, make_list, root_ad, wrap32
from .registry import builtin

# --- evalInEachContext / countMatches ---------------------------------------------------


def _find_expr(ctx: Any, node: Any) -> Any:
    """The expression an attribute reference names (the reference's ``Deref``), or None."""
    if type(node) is ast.AttrRef:
        ad = getattr(ctx, "ad", None)
        if ad is None:
            return None
        if node.absolute:
            ad = root_ad(ctx, ad)
        found = find_attr(ctx, ad, node.lname)
        return found[0] if found is not None else None
    if type(node) is ast.Select:
        base = ctx.eval(node.base)
        if is_ad(base):
            found = find_attr(ctx, base, node.lname, False)
            return found[0] if found is not None else None
    return None


def _in_each(ctx: Any, expr: Any, lst_node: Any, count: bool) -> Any:
    if type(expr) in (ast.AttrRef, ast.Select):
        found = _find_expr(ctx, expr)
        if found is not None:
            expr = found
    elements: Iterator[Any]
    if type(lst_node) is ast.ListExpr:
        elements = (ctx.eval(item) for item in lst_node.items)
    else:
        value = ctx.eval(lst_node)
        if type(value) is ListValue:
            elements = iter_list(value, ctx)
        elif value is UNDEFINED:
            return 0 if count else UNDEFINED
        else:
            return ERROR
    results = []
    matches = 0
    for elem in elements:
        if is_ad(elem):
            r = ctx.eval_in(expr, elem)
        elif elem is UNDEFINED:
            r = UNDEFINED
        else:
            r = ERROR
        if count:
            t = type(r)
            if (t is bool and r) or (t is int and r != 0) or (t is float and r != 0.0):
                matches += 1
        else:
            results.append(r)
    return matches if count else make_list(results)


@builtin("evalInEachContext", 2, 2, kind="raw")
def eval_in_each_context(ctx: Any, expr: ast.Node, lst: ast.Node) -> Any:
    """Evaluate ``expr`` inside each ad of a list: ``evalInEachContext(x, {[x=1], [x=2]})`` is ``{1, 2}``.

    When ``expr`` names an attribute of the current ad, that attribute's
    expression is what gets evaluated in each ad.  A non-ad element gives an
    Error item (Undefined for an Undefined element); an Undefined list gives
    Undefined, any other non-list Error.
    """
    return _in_each(ctx, expr, lst, False)


@builtin("countMatches", 2, 2, kind="raw")
def count_matches(ctx: Any, expr: ast.Node, lst: ast.Node) -> Any:
    """Number of ads in the list where ``expr`` is true: ``countMatches(x > 1, {[x=1], [x=2]})`` is 1.

    Undefined and Error results do not count; an Undefined list gives 0.
    """
    return _in_each(ctx, expr, lst, True)


# --- arguments and environments --------------------------------------------------------

_ARG_SPACE = " \t\n\r"
_NO_VALUE = "\x01\x02\x03\x04\x05\x06"
_PERMITTED_DELIMS = "!#$%&*+,-/:;<>?@^`|~\x1f"


def split_args_v2(text: str) -> Optional[list]:
    """Split a V2 argument string (single quotes, ``''`` escapes); None if a quote is unbalanced."""
    out: list = []
    buf: list = []
    token = False
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c == "'":
            token = True
            i += 1
            while i < n:
                if text[i] == "'":
                    if i + 1 < n and text[i + 1] == "'":
                        buf.append("'")
                        i += 2
                        continue
                    break
                buf.append(text[i])
                i += 1
            if i >= n:
                return None
            i += 1
        elif c in _ARG_SPACE:
            i += 1
            if token:
                token = False
                out.append("".join(buf))
                buf = []
        else:
            token = True
            buf.append(c)
            i += 1
    if token:
        out.append("".join(buf))
    return out


def split_args_v1(text: str) -> list:
    """Split a V1 (Unix) argument string on white space."""
    out: list[str] = []
    buf: list[str] = []
    token = False
    for c in text:
        if c in _ARG_SPACE:
            if token:
                out.append("".join(buf))
                buf, token = [], False
        else:
            buf.append(c)
            token = True
    if token:
        out.append("".join(buf))
    return out


def join_args_v2(args: list) -> str:
    """V2 argument text for a list of arguments, quoting what needs it."""
    result = ""
    for arg in args:
        if result:
            result += " "
        if not arg:
            result += "''"
        for c in arg:
            if c in " \t\n\r'":
                if result and result[-1] == "'":
                    result = result[:-1]
                else:
                    result += "'"
                if c == "'":
                    result += "'"
                result += c + "'"
            else:
                result += c
    return result


def _cut_nul(s: str) -> str:
    nul = s.find("\0")
    return s if nul < 0 else s[:nul]


def _set_env(table: dict, entry: str) -> bool:
    if not entry:
        return False
    eq = entry.find("=")
    if eq < 0 and "$$" in entry:
        table[entry] = _NO_VALUE
        return True
    if eq <= 0:
        return False
    table[entry[:eq]] = entry[eq + 1 :]
    return True


def _env_v2(table: dict) -> str:
    entries = []
    for name in sorted(table, key=lambda k: k.encode("utf-8", "surrogateescape")):
        val = table[name]
        entries.append(name if val == _NO_VALUE else name + "=" + val)
    return join_args_v2(entries)


def _merge_v2(table: dict, text: str) -> bool:
    entries = split_args_v2(_cut_nul(text))
    if entries is None:
        return False
    return all(_set_env(table, e) for e in entries)


@builtin("envV1ToV2", 1, 1)
def env_v1_to_v2(ctx: Any, v: Any) -> Any:
    """Convert a V1 environment (``A=1;B=2``) to V2 syntax (``A=1 B=2``).

    A leading delimiter character picks the delimiter (``"|A=1|B=2"``).
    Undefined gives Undefined; a non-string or an entry without ``=`` is Error.
    """
    if v is UNDEFINED:
        return UNDEFINED
    if type(v) is not str:
        return ERROR
    text = _cut_nul(v)
    table: dict = {}
    if text:
        delim = ";"
        if text[0] == delim:
            text = text[1:]
        elif text[0] in _PERMITTED_DELIMS:
            delim = text[0]
            text = text[1:]
        i, n = 0, len(text)
        while i < n:
            while i < n and text[i] in " \t\n\r":
                i += 1
            start = i
            while i < n and text[i] != "\n" and text[i] != delim:
                i += 1
            entry = text[start:i]
            if i < n:
                i += 1
            if entry and not _set_env(table, entry):
                return ERROR
    return _env_v2(table)


@builtin("mergeEnvironment", 0, None)
def merge_environment(ctx: Any, *envs: Any) -> Any:
    """Merge V2 environments, later ones winning: ``mergeEnvironment("A=1 B=2", "A=3")`` is ``"A=3 B=2"``.

    Undefined arguments are skipped; a non-string or unparsable one is Error.
    """
    table: dict = {}
    for v in envs:
        if v is UNDEFINED:
            continue
        if type(v) is not str or not _merge_v2(table, v):
            return ERROR
    return _env_v2(table)


def _version(rest: tuple) -> Any:
    if not rest:
        return 2
    v = rest[0]
    if type(v) is not int:
        return ERROR
    n = wrap32(v)
    return n if n in (1, 2) else ERROR


@builtin("argsToList", 1, 2)
def args_to_list(ctx: Any, text: Any, *rest: Any) -> Any:
    """Split an argument string into a list: ``argsToList("a 'b c'")`` is ``{"a", "b c"}``.

    The optional version is 1 (split on white space) or 2 (the default, with
    single-quote quoting).  A non-string (even Undefined) or bad quoting is Error.
    """
    version = _version(rest)
    if version is ERROR or type(text) is not str:
        return ERROR
    if version == 1:
        return make_list(split_args_v1(_cut_nul(text)))
    args = split_args_v2(_cut_nul(text))
    return ERROR if args is None else make_list(args)


@builtin("listToArgs", 1, 2)
def list_to_args(ctx: Any, lst: Any, *rest: Any) -> Any:
    """Join a list of strings into an argument string: ``listToArgs({"a", "b c"})`` is ``"a 'b c'"``.

    Every element must be a string; version 1 cannot express white space in
    an argument (Error).
    """
    version = _version(rest)
    if version is ERROR or type(lst) is not ListValue:
        return ERROR
    args = []
    for elem in iter_list(lst, ctx):
        if type(elem) is not str:
            return ERROR
        args.append(_cut_nul(elem))
    if version == 1:
        if any(c in arg for arg in args for c in _ARG_SPACE):
            return ERROR
        return " ".join(args)
    return join_args_v2(args)


# --- users -----------------------------------------------------------------------------


@builtin("userHome", 1, 2, kind="lazy")
def user_home(ctx: Any, user: Any, *rest: Any) -> Any:
    """Home directory of a local user: ``userHome("root")`` is ``"/root"`` on most systems.

    With a second argument that is a non-empty string, that default is
    returned whenever the home cannot be found (or the name is not a string);
    otherwise an unknown user or Undefined name gives Undefined and a
    non-string name Error.
    """
    default = ""
    if rest:
        d = rest[0]()
        if type(d) is str:
            default = d
    name = user()
    if name is UNDEFINED and not default:
        return UNDEFINED
    if type(name) is not str:
        return default or ERROR
    try:
        import pwd  # POSIX only: imported here so the library still loads where it is missing
    except ImportError:
        return ERROR
    try:
        home = pwd.getpwnam(_cut_nul(name)).pw_dir
    except (KeyError, ValueError, UnicodeError):
        return default or UNDEFINED
    if not home:
        return default or UNDEFINED
    return home


@builtin("userMap", 2, 4)
def user_map(ctx: Any, map_name: Any, user: Any, *rest: Any) -> Any:
    """Look a user up in a named HTCondor user map: ``userMap("groups", "bob")``.

    No maps are configured here, so the result is the fourth argument (a
    default) when given and Undefined otherwise; an Error map name or user
    gives Error.
    """
    if type(map_name) is not str or type(user) is not str:
        if map_name is ERROR or user is ERROR:
            return ERROR
    return rest[1] if len(rest) == 2 else UNDEFINED
