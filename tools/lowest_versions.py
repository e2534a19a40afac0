"""The lowest versions pyproject.toml allows, as a pip constraints file: ``name==floor`` for every
``name>=floor`` of the core dependencies and of the extras named (CI's second lane installs the
package with them on the oldest Python it supports).

    python tools/lowest_versions.py test > constraints.txt
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import tomllib

ROOT = Path(__file__).resolve().parent.parent


def floors(extras: list[str]) -> list[str]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    specs = list(project["dependencies"]) + [s for e in extras for s in project["optional-dependencies"][e]]
    out: dict[str, str] = {}
    for spec in specs:
        m = re.match(r"^\s*([A-Za-z0-9_.-]+)(?:\[[^]]*\])?\s*(?:==|>=)\s*([0-9][^,;\s]*)", spec)
        if m and not m.group(1).startswith("evalstore"):
            out[m.group(1).lower()] = m.group(2)
    return [f"{name}=={version}" for name, version in sorted(out.items())]


if __name__ == "__main__":
    print("\n".join(floors(sys.argv[1:])))
