"""``classad.testing`` and ``matchmaker.testing`` say clearly that they need Hypothesis when
Hypothesis is missing."""

from __future__ import annotations

import subprocess
import sys

from support import ROOT

BLOCK_HYPOTHESIS = """
import sys
class Block:
    def find_spec(self, name, path=None, target=None):
        if name == "hypothesis" or name.startswith("hypothesis."):
            raise ImportError("no hypothesis here")
sys.meta_path.insert(0, Block())
import classad
print(classad.ExprTree("1 + 2").eval())
try:
    import classad.testing
except ImportError as exc:
    print("refused:", exc)
import matchmaker
try:
    import matchmaker.testing
except ImportError as exc:
    print("refused:", exc)
"""


def test_testing_module_names_its_missing_dependency():
    proc = subprocess.run(
        [sys.executable, "-c", BLOCK_HYPOTHESIS], cwd=ROOT, capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0] == "3"  # the language itself never needs Hypothesis
    assert lines[1].startswith("refused: classad.testing") and "pip install hypothesis" in lines[1]
    assert lines[2].startswith("refused: matchmaker.testing") and "pip install hypothesis" in lines[2]
