"""The memory one request of the app may use, and the check that refuses work beyond it.

Every view computes display-sized data; the few operations whose size follows the user's choice
(the embeddings forward pass, downloads, uploads) check their estimate here before allocating.
The budget counts what Python and NumPy allocate while the request runs (what ``tracemalloc``
sees), and the tests hold every view to it at the top of every range.
"""

from __future__ import annotations

import pe_core

#: Largest allocation one request may make: 128 MiB.
REQUEST_BYTES = 128 * 2**20


def check_request(n_bytes: int, what: str) -> None:
    """Refuse, before allocating, work that would need more than :data:`REQUEST_BYTES`."""
    if n_bytes > REQUEST_BYTES:
        raise pe_core.InputError(
            f"{what} would need about {n_bytes / 2**20:,.0f} MiB, more than the "
            f"{REQUEST_BYTES // 2**20} MiB one request of this app may use"
        )
