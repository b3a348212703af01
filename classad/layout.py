"""Shared-layout attribute storage: ads with the same attribute names share one key table.

An ad normally stores its attributes in a dict (lower-case name -> ``(spelling,
node)``), which costs about 1.5 KB for a 47-attribute job ad before any value.
A queue dump holds 100,000 such ads in a few dozen distinct attribute lists, so
:func:`compact` stores an ad as one tuple: a shared :class:`Layout` (the names,
in order, and where each one is) followed by the ad's nodes, about 400 bytes for
the same ad.  :class:`SharedAttrs` reads like the dict it replaces (``get``, ``in``,
``[]``, ``items``, ``values``, ``len``, iteration); the ad turns it back into a
dict before its first change (``ClassAd`` does this), so it is never written.

Layouts are remembered in a bounded table; when it is full, new attribute
lists keep their dicts (a layout used by one ad would save nothing).
"""

from __future__ import annotations

from typing import Any, Iterator, Optional

from . import ast

Entry = tuple[str, ast.Node]


class Layout:
    """The attribute names of a family of ads: spellings in order and each lower-case key's place."""

    __slots__ = ("spellings", "keys", "place", "_positions")

    def __init__(self, spellings: tuple[str, ...], keys: tuple[str, ...]) -> None:
        self.spellings = spellings
        self.keys = keys
        self.place = {key: i for i, key in enumerate(keys)}
        self._positions: dict[tuple[str, ...], tuple[int, ...]] = {}

    def positions(self, keys: tuple[str, ...]) -> tuple[int, ...]:
        """Where each of ``keys`` (lower-case) is, -1 for a missing one; remembered per tuple."""
        got = self._positions.get(keys)
        if got is None:
            if len(self._positions) >= 256:
                self._positions.clear()
            got = self._positions[keys] = tuple(self.place.get(k, -1) for k in keys)
        return got


_item = tuple.__getitem__
_size = tuple.__len__


class SharedAttrs(tuple):
    """A read-only view shaped like ``dict[lower-case name, (spelling, node)]`` over a
    shared :class:`Layout` and one ad's nodes.

    It is one tuple, ``(layout, node, node, ...)``, so that an ad costs a single object
    beyond its nodes; the tuple's own item access and length are not its interface (use
    the mapping methods)."""

    __slots__ = ()

    def __new__(cls, layout: Layout, nodes: tuple[ast.Node, ...]) -> "SharedAttrs":
        return tuple.__new__(cls, (layout, *nodes))

    @property
    def layout(self) -> Layout:
        """The names, shared with every ad of the same attribute list."""
        return _item(self, 0)  # type: ignore[no-any-return]

    def get(self, key: str, default: Any = None) -> Any:  # type: ignore[override]
        layout: Layout = _item(self, 0)
        i = layout.place.get(key)
        if i is None:
            return default
        return (layout.spellings[i], _item(self, i + 1))

    def __getitem__(self, key: str) -> Entry:  # type: ignore[override]
        layout: Layout = _item(self, 0)
        i = layout.place[key]
        return (layout.spellings[i], _item(self, i + 1))

    def __contains__(self, key: object) -> bool:
        return key in _item(self, 0).place

    def __len__(self) -> int:
        return _size(self) - 1

    def __iter__(self) -> Iterator[str]:
        return iter(_item(self, 0).keys)

    def keys(self) -> tuple[str, ...]:
        return _item(self, 0).keys  # type: ignore[no-any-return]

    def _nodes(self) -> Iterator[ast.Node]:
        it = tuple.__iter__(self)
        next(it)
        return it

    def values(self) -> Iterator[Entry]:
        return zip(_item(self, 0).spellings, self._nodes())

    def items(self) -> Iterator[tuple[str, Entry]]:
        layout: Layout = _item(self, 0)
        return zip(layout.keys, zip(layout.spellings, self._nodes()))

    def nodes_of(self, keys: tuple[str, ...]) -> list[Optional[ast.Node]]:
        """The node of each of ``keys`` (lower-case), None for a missing one."""
        return [_item(self, i + 1) if i >= 0 else None for i in _item(self, 0).positions(keys)]

    def to_dict(self) -> dict[str, Entry]:
        """The same attributes as a new, writable dict."""
        return dict(self.items())

    def __eq__(self, other: object) -> bool:
        return self is other

    def __ne__(self, other: object) -> bool:
        return self is not other

    __hash__ = object.__hash__  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"SharedAttrs({self.to_dict()!r})"

    def __reduce__(self) -> tuple:
        # Pickled (and deep-copied) as the names and nodes; loading shares the layout again.
        return (_rebuild, (_item(self, 0).spellings, tuple(self._nodes())))

    def __copy__(self) -> "SharedAttrs":
        return self


def _rebuild(spellings: tuple[str, ...], nodes: tuple) -> "dict[str, Entry] | SharedAttrs":
    """A pickled :class:`SharedAttrs` (a dict when the layout table is full)."""
    return compact({spelling.lower(): (spelling, node) for spelling, node in zip(spellings, nodes)})


# Spellings in order -> their layout.  Bounded: past the limit new lists are not compacted.
_LAYOUTS: dict[tuple[str, ...], Layout] = {}
LAYOUT_LIMIT = 4096


def compact(attrs: dict[str, Entry]) -> "dict[str, Entry] | SharedAttrs":
    """``attrs`` as a :class:`SharedAttrs` when its layout is known or may still be added;
    otherwise ``attrs`` itself."""
    if not attrs:
        return attrs
    spellings, nodes = zip(*attrs.values())
    layout: Optional[Layout] = _LAYOUTS.get(spellings)
    if layout is None:
        if len(_LAYOUTS) >= LAYOUT_LIMIT:
            return attrs
        layout = _LAYOUTS[spellings] = Layout(spellings, tuple(attrs))
    return SharedAttrs(layout, nodes)


__all__ = ["Layout", "SharedAttrs", "compact", "LAYOUT_LIMIT"]
