"""Subsample parameters: methods, fraction presets, names, per-topic seeds."""

from __future__ import annotations

import hashlib
import math
from collections.abc import Iterable

import numpy as np

from ..errors import SubsampleError

#: the methods :func:`evalstore.subsample.create_subsamples` draws with
METHODS = ("buckley_voorhees",)
#: every subsample method and the tag of its names: Buckley–Voorhees (``dl19@bv0.5#0``) and the
#: leave-out sets of evalstore.pool.leave_out (``dl19@logo10:GROUP``, ``dl19@loro10:RUN``)
METHOD_TAGS = {"buckley_voorhees": "bv", "leave_one_group_out": "logo", "leave_one_run_out": "loro"}

#: Bompada et al. (SIGIR 2007) Sec. 4.1: F = {0.01, ..., 0.05, 0.1, ..., 0.9} (14 values).
BOMPADA_FRACTIONS = (0.01, 0.02, 0.03, 0.04, 0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9)
#: Sakai (SIGIR 2007) Sec. 5: j in {90, 70, 50, 30, 10} percent.
SAKAI_FRACTIONS = (0.9, 0.7, 0.5, 0.3, 0.1)
PRESETS = {"bompada": BOMPADA_FRACTIONS, "sakai": SAKAI_FRACTIONS}

#: Tolerance added before truncating R * f (see the module docstring).
TRUNC_EPS = 1e-9


# --------------------------------------------------------------------------- parameters
def parse_fractions(spec: str | float | Iterable[float]) -> list[float]:
    """Fractions from ``'0.9,0.7,0.5'``, a preset name (``'bompada'``, ``'sakai'``) or numbers.

    Each must satisfy 0 < f <= 1; duplicates are dropped, the order given is kept."""
    if isinstance(spec, str):
        text = spec.strip()
        if text.lower() in PRESETS:
            values: list[float] = list(PRESETS[text.lower()])
        else:
            values = []
            for part in (p.strip() for p in text.split(",")):
                if not part:
                    continue
                try:
                    values.append(float(part[:-1]) / 100 if part.endswith("%") else float(part))
                except ValueError:
                    raise SubsampleError(
                        f"fraction {part!r} is not a number; give fractions such as 0.9,0.5,0.1 (or 50%), "
                        f"or a preset: {', '.join(PRESETS)}"
                    ) from None
    elif isinstance(spec, (int, float)):
        values = [float(spec)]
    else:
        values = [float(x) for x in spec]
    if not values:
        raise SubsampleError("no fraction given; e.g. --fractions 0.9,0.7,0.5,0.3,0.1 or --fractions bompada")
    for f in values:
        if not (0 < f <= 1) or math.isnan(f):
            raise SubsampleError(f"fraction {f!r} is outside (0, 1]; a fraction is the share of judgments kept")
    return list(dict.fromkeys(values))


def fraction_label(fraction: float) -> str:
    """Shortest exact decimal form of a fraction: 0.05 -> '0.05', 1.0 -> '1'."""
    text = repr(float(fraction))
    return text[:-2] if text.endswith(".0") else text


def subsample_name(prefix: str, fraction: float, trial: int, method: str = "buckley_voorhees") -> str:
    """``<prefix>@bv<fraction>#<trial>``."""
    return f"{prefix}@{METHOD_TAGS[method]}{fraction_label(fraction)}#{trial}"


def topic_seed(seed: int, trial: int, topic: str, method: str = "buckley_voorhees") -> int:
    """The 128-bit PCG64 seed of one (seed, trial, topic) shuffle."""
    digest = hashlib.sha256(f"{method}|{int(seed)}|{int(trial)}|{topic}".encode()).digest()
    return int.from_bytes(digest[:16], "little")


def check_int(name: str, value, minimum: int, maximum: int = 2**63 - 1) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise SubsampleError(f"{name} must be an integer, not {value!r}")
    if not (minimum <= int(value) <= maximum):
        raise SubsampleError(f"{name} must be between {minimum} and {maximum}, not {value}")
    return int(value)
