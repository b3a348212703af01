"""HTCondor's own XML printer, reached through the ``htcondor`` wheel's shared library.

``classad2`` has no XML writer, but the wheel ships ``libcondor_utils`` with
``sPrintAdAsXML``.  A ``classad2.ClassAd`` keeps a pointer to its C++ ad in its
``_handle`` object (just after the Python object header), so ctypes can call
the printer directly.  The C++ ``std::string`` argument is laid out by hand
(libstdc++'s layout: data pointer, size, 16-byte local buffer).  Anything
unexpected makes :func:`oracle_xml_printer` return None and the tests skip.
"""

from __future__ import annotations

import ctypes
import glob
import os
import sys
from typing import Callable, Optional

_PRINT_AD = (
    "_Z13sPrintAdAsXMLRNSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEERKN7classad7"
    "ClassAdEPK8flat_setIS4_NS6_12CaseIgnLTStrEE"
)


def _new_string() -> ctypes.Array:
    buf = ctypes.create_string_buffer(32)
    addr = ctypes.addressof(buf)
    ctypes.c_void_p.from_address(addr).value = addr + 16  # empty string in its local buffer
    return buf


def _read_string(buf: ctypes.Array) -> str:
    addr = ctypes.addressof(buf)
    data = ctypes.c_void_p.from_address(addr).value
    size = ctypes.c_size_t.from_address(addr + 8).value
    return ctypes.string_at(data, size).decode("utf-8", "surrogateescape")


def oracle_xml_printer() -> Optional[Callable[[object], str]]:
    """A function printing a ``classad2.ClassAd`` as HTCondor's XML, or None if unavailable."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        # isort: off
        import htcondor2  # first: it switches classad2 to HTCondor's default mode
        import classad2
        # isort: on
    except ImportError:
        return None
    libdir = os.path.join(os.path.dirname(os.path.dirname(htcondor2.__file__)), "htcondor.libs")
    libs = glob.glob(os.path.join(libdir, "libcondor_utils*.so*"))
    if not libs:
        return None
    try:
        func = getattr(ctypes.CDLL(libs[0]), _PRINT_AD)
    except (OSError, AttributeError):
        return None
    func.restype = None

    def print_xml(ad: object) -> str:
        handle = ad._handle  # type: ignore[attr-defined]
        pointer = ctypes.c_void_p.from_address(id(handle) + 2 * ctypes.sizeof(ctypes.c_void_p)).value
        buf = _new_string()
        func(buf, ctypes.c_void_p(pointer), None)
        return _read_string(buf)

    # Sanity check before trusting the layout assumptions.
    try:
        text = print_xml(classad2.ClassAd('[a = 1; b = "x"]'))
    except Exception:  # pragma: no cover - layout changed
        return None
    if text != '<c>\n    <a n="a"><i>1</i></a>\n    <a n="b"><s>x</s></a>\n</c>\n':
        return None
    return print_xml
