"""The one registry of built-in functions.

Each entry records the canonical name (looked up case-insensitively), the arity
range, how the arguments are passed, and the implementation.  Arity is checked
by the compiler before any argument is evaluated: an unknown name or a wrong
argument count compiles to the constant Error, as the C++ library does.

Calling conventions (``kind``):

* ``"eager"``: ``impl(ctx, *values)``; arguments are evaluated left to right first.
* ``"lazy"``:  ``impl(ctx, *thunks)``; each thunk is a zero-argument callable
  returning the argument's value, so the function decides what to evaluate
  (``ifThenElse``, ``strcat`` stopping at the first Undefined).
* ``"raw"``:   ``impl(ctx, *nodes)``; the argument expression nodes themselves
  (``unparse(attr)``, ``evalInEachContext(expr, list)``).

``ctx`` is a :class:`classad.evaluate.CallContext`: ``ctx.ad`` is the ad the call
is evaluated in, ``ctx.state`` the evaluation state (clock, random source, mode),
``ctx.eval(node)`` evaluates a node in the current ad, ``ctx.eval_in(node, ad)``
in another ad, and ``ctx.parse(text)`` parses an expression (raising
``classad.errors.ParseError``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Iterable, Optional


@dataclass(frozen=True)
class Builtin:
    """One registered function."""

    name: str
    min_args: int
    max_args: Optional[int]
    kind: str
    impl: Callable

    def accepts(self, n: int) -> bool:
        """Whether ``n`` arguments is a valid count."""
        return n >= self.min_args and (self.max_args is None or n <= self.max_args)


FUNCTIONS: dict[str, Builtin] = {}

_listeners: list[Callable[[], None]] = []


def register(
    name: str,
    impl: Callable,
    min_args: int = 0,
    max_args: Optional[int] = None,
    kind: str = "eager",
    aliases: Iterable[str] = (),
) -> None:
    """Register (or replace) a function under ``name`` and its aliases."""
    if kind not in ("eager", "lazy", "raw"):
        raise ValueError(f"unknown function kind {kind!r}")
    for n in (name, *aliases):
        FUNCTIONS[n.lower()] = Builtin(n, min_args, max_args, kind, impl)
    for listener in _listeners:
        listener()


def builtin(
    name: str, min_args: int = 0, max_args: Optional[int] = None, kind: str = "eager", aliases: Iterable[str] = ()
) -> Callable[[Callable], Callable]:
    """Decorator form of :func:`register`."""

    def wrap(impl: Callable) -> Callable:
        register(name, impl, min_args, max_args, kind, aliases)
        return impl

    return wrap


def lookup(name: str) -> Optional[Builtin]:
    """The function registered under ``name`` (any case), or None."""
    return FUNCTIONS.get(name.lower())


def on_change(listener: Callable[[], None]) -> None:
    """Call ``listener`` whenever the registry changes (the compiler clears its caches)."""
    _listeners.append(listener)
