"""Hypothesis strategies for ClassAds: ads and expressions shaped like a site's own dumps.

Property-test a policy against ads that look like the pool's::

    from hypothesis import given
    from classad.testing import ads

    @given(ads(like="slots.ad"), ads(like="jobs.ad"))
    def test_small_jobs_fit(slot, job): ...

* :func:`ads` -- ads following a dump (names, kinds, ranges, vocabularies, missing
  frequencies, expressions) or an explicit description (``schema={...}``);
* :func:`expressions` -- expression text, over a site's names or the test context;
* :func:`values` -- single values of every kind, Undefined and Error included;
* :func:`learn` / :func:`from_dict` -- the :class:`Schema` the strategies draw from;
* :func:`canonical` -- one encoding of this library's and ``classad2``'s results.

Needs the ``hypothesis`` package, which the language itself never imports: it is in the
project's ``[test]`` extra (``pip install 'pyclassad[test]'``, or ``pip install hypothesis``).
"""

from __future__ import annotations

try:
    import hypothesis  # noqa: F401
except ImportError:  # pragma: no cover - exercised by tests/language/test_testing_module.py
    raise ImportError(
        "classad.testing provides Hypothesis strategies and needs the 'hypothesis' package: "
        "pip install hypothesis (it is in the project's [test] extra: pip install 'pyclassad[test]')"
    ) from None

from .ads import VALUE_KINDS, ads, attribute, reshaped, values
from .canonical import canonical
from .choices import coin, weighted
from .expressions import CONTEXT_MY, CONTEXT_TARGET, REF_NAMES, expressions, literals, site_expressions
from .schema import KINDS, AttrSpec, Schema, from_dict, learn, read_ads

__all__ = [
    "CONTEXT_MY",
    "CONTEXT_TARGET",
    "KINDS",
    "REF_NAMES",
    "VALUE_KINDS",
    "AttrSpec",
    "Schema",
    "ads",
    "attribute",
    "canonical",
    "coin",
    "expressions",
    "from_dict",
    "learn",
    "literals",
    "read_ads",
    "reshaped",
    "site_expressions",
    "values",
    "weighted",
]
