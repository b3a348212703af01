"""Time reading one ad of many attributes, this library against HTCondor's C++ library.

Workloads (``--attrs`` attributes, default 100,000), each read from text in memory:

* ``old-lit``  / ``old-expr``: old format, ``AttrN = N`` / ``AttrN = aN + N`` lines;
* ``new-lit``  / ``new-expr``: one new-syntax line ``[ AttrN = N; ... ]``, via ``parseAds``;
* ``ad-lit``   / ``ad-expr``:  the same text given to ``ClassAd(text)``;
* ``json``, ``xml``: literal values.

Reports the median seconds of ``--repeat`` runs and the ratio ours / C++.  Run it at two
sizes (``--attrs 50000`` and ``100000``) to see that the time grows linearly.

    python benchmarks/bench_large_record.py [--attrs 100000] [--repeat 3]

Measured on the development machine (2 shared cores, HTCondor 25.14), every run cold,
median of 3, seconds:

=========  ===========  ==========  ===========  ==========
workload   50,000 ours  50,000 C++  100,000 ours 100,000 C++
=========  ===========  ==========  ===========  ==========
old-lit    0.18         0.029       0.35         0.047
old-expr   0.63         0.032       1.28         0.087
new-lit    0.20         0.021       0.52         0.045
new-expr   0.38         0.038       0.79         0.076
ad-lit     0.19         0.016       0.38         0.029
ad-expr    0.40         0.022       0.75         0.046
json       0.15         0.022       0.30         0.043
xml        0.27         0.040       0.61         0.082
=========  ===========  ==========  ===========  ==========

Literal values are 7-13x slower than C++, expressions 10-16x, JSON and XML about 7x.
Expressions went through the Lark parser at about 30 us each (3.5-3.8 s here, 60-95x)
until the hand-written parser (classad/descent.py) took over valid text; it spends about
5 us on ``aN + N``.  A very large ad is read with the cyclic garbage collector paused
(classad/bulk.py; the old-format reader takes the pause only while it builds an ad
longer than 256 KiB and gives it back before handing the ad out), so the time grows
linearly with the ad's size.  docs/reliability.md (large records) has the history.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Callable, Optional

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import classad
from classad.formats import ParserType, old_format, parseAds

try:
    # isort: off
    import htcondor2  # noqa: F401  (must precede classad2: HTCondor's default mode)
    import classad2
    # isort: on
except ImportError:  # pragma: no cover - the comparison is optional
    classad2 = None


def texts(n: int) -> dict[str, tuple[str, str]]:
    """workload -> (text, how to read it)."""
    lit_new = "[ " + "; ".join(f"Attr{i} = {i}" for i in range(n)) + " ]\n"
    expr_new = "[ " + "; ".join(f"Attr{i} = a{i} + {i}" for i in range(n)) + " ]\n"
    return {
        "old-lit": ("".join(f"Attr{i} = {i}\n" for i in range(n)), "Old"),
        "old-expr": ("".join(f"Attr{i} = a{i} + {i}\n" for i in range(n)), "Old"),
        "new-lit": (lit_new, "New"),
        "new-expr": (expr_new, "New"),
        "ad-lit": (lit_new, "ad"),
        "ad-expr": (expr_new, "ad"),
        "json": (json.dumps({f"Attr{i}": i for i in range(n)}), "JSON"),
        "xml": (
            "<classads><c>" + "".join(f'<a n="Attr{i}"><i>{i}</i></a>' for i in range(n)) + "</c></classads>\n",
            "XML",
        ),
    }


def ours(text: str, how: str) -> int:
    if how == "ad":
        return len(classad.ClassAd(text))
    (ad,) = parseAds(text, getattr(ParserType, how))
    return len(ad)


def theirs(text: str, how: str) -> int:
    if how == "ad":
        return len(classad2.ClassAd(text))
    (ad,) = classad2.parseAds(text, getattr(classad2.ParserType, how))
    return len(ad)


def cold() -> None:
    """Forget every parse this process has cached, so each run reads as a fresh process does."""
    classad.parser.parse_expr.cache_clear()
    classad.parser.parse_old_value.cache_clear()
    old_format._clear_caches()


def timed(fn: Callable[[str, str], int], text: str, how: str, repeat: int, n: int) -> float:
    runs = []
    for _ in range(repeat):
        cold()
        start = time.perf_counter()
        assert fn(text, how) == n
        runs.append(time.perf_counter() - start)
    return statistics.median(runs)


def main(argv: Optional[list] = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--attrs", type=int, default=100_000)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args(argv)
    print(f"{'workload':10} {'ours (s)':>9} {'C++ (s)':>9} {'ratio':>7}")
    for name, (text, how) in texts(args.attrs).items():
        mine = timed(ours, text, how, args.repeat, args.attrs)
        ref = timed(theirs, text, how, args.repeat, args.attrs) if classad2 else float("nan")
        print(f"{name:10} {mine:9.3f} {ref:9.3f} {mine / ref:7.1f}")


if __name__ == "__main__":
    main()
