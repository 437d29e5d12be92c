"""Code that reproduces the encoding on screen, for the worked-example view (pure functions)."""

from __future__ import annotations


def numpy_snippet(n_positions: int, d_model: int, base: float, convention: str) -> str:
    """Plain NumPy code that builds the same matrix as ``pe_core.sinusoidal_encoding``."""
    header = (
        "import numpy as np\n\n"
        f"L, d_model, base = {n_positions}, {d_model}, {base!r}\n"
        "k = np.arange(L)[:, None]                       # positions, as a column\n"
    )
    if convention == "vaswani":
        body = (
            "i = np.arange((d_model + 1) // 2)                # one frequency per sin/cos pair\n"
            "w = base ** (-2 * i / d_model)\n"
            "pe = np.zeros((L, d_model))\n"
            "pe[:, 0::2] = np.sin(k * w)                      # even columns: sin\n"
            "pe[:, 1::2] = np.cos(k * w[: d_model // 2])      # odd columns: cos\n"
        )
    elif convention == "split":
        body = (
            "n_sin = (d_model + 1) // 2                       # the sin half gets the odd column\n"
            "w = base ** (-2 * np.arange(n_sin) / d_model)\n"
            "pe = np.concatenate([np.sin(k * w), np.cos(k * w[: d_model // 2])], axis=1)\n"
        )
    elif convention == "tensor2tensor":
        body = (
            "h = d_model // 2\n"
            "w = base ** (-np.arange(h) / max(h - 1, 1))      # from 1 down to exactly 1/base\n"
            "pe = np.concatenate([np.sin(k * w), np.cos(k * w)], axis=1)\n"
            "pe = np.pad(pe, [(0, 0), (0, d_model % 2)])      # odd d_model: a zero column\n"
        )
    else:
        raise ValueError(
            f"convention must be one of 'vaswani', 'tensor2tensor', 'split', got {convention!r}"
        )
    return header + body


def torch_snippet(n_positions: int, d_model: int, base: float) -> str:
    """PyTorch code for the vaswani convention (as in the PyTorch tutorial, in float64)."""
    return (
        "import torch\n\n"
        f"L, d_model, base = {n_positions}, {d_model}, {base!r}\n"
        "k = torch.arange(L, dtype=torch.float64).unsqueeze(1)\n"
        "i = torch.arange((d_model + 1) // 2, dtype=torch.float64)\n"
        "w = base ** (-2 * i / d_model)\n"
        "pe = torch.zeros(L, d_model, dtype=torch.float64)\n"
        "pe[:, 0::2] = torch.sin(k * w)\n"
        "pe[:, 1::2] = torch.cos(k * w[: d_model // 2])\n"
    )


def pe_core_snippet(n_positions: int, d_model: int, base: float, convention: str) -> str:
    """The same matrix from pe_core (within 5e-16 of the exact values, also at long context)."""
    return (
        "import pe_core\n\n"
        f"pe = pe_core.sinusoidal_encoding({n_positions}, {d_model}, base={base!r}, "
        f"convention={convention!r})\n"
    )
