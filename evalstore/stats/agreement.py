"""Agreement between two judges' labels, from confusion matrices.

A confusion matrix ``C`` counts the items both judges labelled: ``C[..., a, b]`` is the number of
items the reference judge gave the ``a``-th label and the candidate judge the ``b``-th, the labels
being the values of ``labels`` in ascending order. Every function takes a stack of matrices
(shape ``(..., G, G)``: one per topic, say) and returns one value per matrix; a value that is
undefined (a zero denominator: no items, or a single label used by both judges) is NaN.

* :func:`cohen_kappa`: Cohen's kappa, plain or weighted, exactly as scikit-learn's
  ``cohen_kappa_score(ref, cand, weights=None | "linear" | "quadratic")`` computes it:
  ``kappa = 1 - sum(w * C) / sum(w * E)`` with ``E`` the outer product of the two marginals over
  the number of items, and weights ``w[a, b] = 1[a != b]`` (plain), ``|i_a - i_b|`` (linear) or
  ``(i_a - i_b)^2`` (quadratic), where ``i_a`` is the position of label ``a`` among the labels
  *used by either judge in that matrix* (scikit-learn's ``unique_labels``: with grades 0, 1 and 3
  in use, 3 is one step from 1, not two);
* :func:`krippendorff_alpha`: Krippendorff's alpha for two coders, nominal or ordinal, exactly as
  the ``krippendorff`` package computes it (Krippendorff, *Computing Krippendorff's
  Alpha-Reliability*, 2011): the coincidence matrix of two coders without missing values is
  ``o = C + C^T``; ``n_v`` its marginals, ``n`` their sum; expected coincidences
  ``e = (n_v n_v^T - diag(n_v)) / (n - 1)``; ``alpha = 1 - sum(o * d) / sum(e * d)`` with the
  metric ``d[c, k] = 1[c != k]`` (nominal) or ``(sum_{g=c..k} n_g - (n_c + n_k) / 2)^2``
  (ordinal). Items only one judge labelled are not pairable and do not count (as in the package);
* :func:`binary`: the 2 x 2 matrix of "relevant" (label >= ``rel``) against "not relevant";
* :func:`observed_agreement`: the share of items with the same label.

:func:`confusion` builds the matrix of two label vectors (tests, small inputs); the store builds
its matrices in SQL (:mod:`evalstore.judges`).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

KAPPA_WEIGHTS = (None, "linear", "quadratic")
ALPHA_LEVELS = ("nominal", "ordinal")


def confusion(
    ref: Sequence[int], cand: Sequence[int], labels: Sequence[int] | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """``(labels, C)``: the labels (ascending; default: those either vector uses) and the confusion
    matrix of two equally long label vectors (rows: ``ref``, columns: ``cand``)."""
    a, b = np.asarray(ref), np.asarray(cand)
    if a.shape != b.shape or a.ndim != 1:
        raise ValueError(f"two label vectors of the same length are needed, not shapes {a.shape} and {b.shape}")
    lab = np.unique(np.concatenate([a, b])) if labels is None else np.asarray(sorted(labels))
    ia, ib = np.searchsorted(lab, a), np.searchsorted(lab, b)
    if len(a) and (ia.max() >= len(lab) or ib.max() >= len(lab) or (lab[ia] != a).any() or (lab[ib] != b).any()):
        raise ValueError("a label is missing from labels")
    G = len(lab)
    C = np.bincount(ia * G + ib, minlength=G * G).reshape(G, G).astype(np.float64)
    return lab, C


def _matrices(C) -> np.ndarray:
    M = np.asarray(C, dtype=np.float64)
    if M.ndim < 2 or M.shape[-1] != M.shape[-2]:
        raise ValueError(f"confusion matrices are square (..., G, G), not of shape {M.shape}")
    return M


def _ratio(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.where(den != 0, num / np.where(den != 0, den, 1.0), np.nan)
    return out


def _positions(M: np.ndarray) -> np.ndarray:
    """The position of each label among the labels used in its matrix (scikit-learn's labels)."""
    used = (M.sum(axis=-1) + M.sum(axis=-2)) > 0
    return np.cumsum(used, axis=-1) - 1.0


def cohen_kappa(C, weights: str | None = None) -> np.ndarray:
    """Cohen's kappa of each matrix (see the module docstring); NaN where undefined."""
    if weights not in KAPPA_WEIGHTS:
        raise ValueError(f"weights is None, 'linear' or 'quadratic', not {weights!r}")
    M = _matrices(C)
    G = M.shape[-1]
    n = M.sum(axis=(-2, -1))
    rows, cols = M.sum(axis=-1), M.sum(axis=-2)
    E = _ratio(rows[..., :, None] * cols[..., None, :], n[..., None, None])
    if weights is None:
        W = np.broadcast_to(1.0 - np.eye(G), M.shape)
    else:
        pos = _positions(M)
        D = np.abs(pos[..., :, None] - pos[..., None, :])
        W = D if weights == "linear" else D**2
    return 1.0 - _ratio((W * M).sum(axis=(-2, -1)), (W * np.nan_to_num(E)).sum(axis=(-2, -1)))


def krippendorff_alpha(C, level: str = "nominal") -> np.ndarray:
    """Krippendorff's alpha of two coders for each matrix (see the module docstring); NaN where
    undefined (fewer than two values in use, or no pairable item)."""
    if level not in ALPHA_LEVELS:
        raise ValueError(f"level is 'nominal' or 'ordinal', not {level!r}")
    M = _matrices(C)
    G = M.shape[-1]
    o = M + np.swapaxes(M, -1, -2)
    nv = o.sum(axis=-1)
    n = nv.sum(axis=-1)
    e = _ratio(nv[..., :, None] * nv[..., None, :] - nv[..., :, None] * np.eye(G), (n - 1.0)[..., None, None])
    if level == "nominal":
        d = np.broadcast_to(1.0 - np.eye(G), M.shape)
    else:
        cum = np.cumsum(nv, axis=-1)
        lo = np.minimum(np.arange(G)[:, None], np.arange(G)[None, :])
        hi = np.maximum(np.arange(G)[:, None], np.arange(G)[None, :])
        between = cum[..., hi] - cum[..., lo] + nv[..., lo]  # n_lo + ... + n_hi
        d = (between - (nv[..., :, None] + nv[..., None, :]) / 2.0) ** 2
    return 1.0 - _ratio((o * d).sum(axis=(-2, -1)), (np.nan_to_num(e) * d).sum(axis=(-2, -1)))


def binary(C, labels: Sequence[int] | np.ndarray, rel: int) -> np.ndarray:
    """The ``(..., 2, 2)`` matrices of binary relevance (index 1: label >= ``rel``)."""
    M = _matrices(C)
    hit = (np.asarray(labels) >= rel).astype(np.intp)
    if hit.shape != M.shape[-1:]:
        raise ValueError(f"{len(hit)} labels for matrices of {M.shape[-1]} labels")
    H = np.eye(2)[hit]  # (G, 2): which side of rel each label is on
    return np.einsum("ca,...ck,kb->...ab", H, M, H)


def observed_agreement(C) -> np.ndarray:
    """The share of items both judges gave the same label (NaN for no item)."""
    M = _matrices(C)
    return _ratio(np.trace(M, axis1=-2, axis2=-1), M.sum(axis=(-2, -1)))
