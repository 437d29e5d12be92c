"""Large test inputs, built when a test asks for them, never at import (issue 48: collecting the
suite must not deflate a gibibyte).

A zip bomb written by ``zipfile`` deflates 1 GiB of zeros (10 to 15 s); the archive here is the
same kind of file, assembled in well under a second: deflate's output for a block of zeros
after a full flush is the same for every block, so one block's bytes are repeated, and the
headers are written by hand. ``tests/dashboard/test_upload_messages.py`` checks that
``zipfile`` reads it back as the full 1 GiB with the right CRC.
"""

from __future__ import annotations

import functools
import struct
import zlib

#: Bytes of zeros in each repeated deflate block.
_BLOCK = 2**20


@functools.cache
def zip_bomb(member: str, *, unpacked_bytes: int = 2**30) -> bytes:
    """A zip archive of one deflated member, ``member``, that unpacks to ``unpacked_bytes``
    zeros (1 GiB by default) in about 1 MB.

    Parameters
    ----------
    member : str
        The member's name inside the archive (``"cos.npy"``, ``"table.npy"``).
    unpacked_bytes : int, optional
        Its size once unpacked: a positive multiple of 1 MiB, below 4 GiB (no zip64 fields).

    Returns
    -------
    bytes
        The archive, cached per process (it is immutable).
    """
    if unpacked_bytes <= 0 or unpacked_bytes % _BLOCK or unpacked_bytes >= 2**32:
        raise ValueError(f"unpacked_bytes must be a multiple of {_BLOCK} below 2**32")
    zeros = bytes(_BLOCK)
    compressor = zlib.compressobj(6, zlib.DEFLATED, -15)  # raw deflate, as zip stores it
    block = compressor.compress(zeros) + compressor.flush(zlib.Z_FULL_FLUSH)
    blocks = unpacked_bytes // _BLOCK
    body = block * blocks + compressor.flush()
    crc = 0
    for _ in range(blocks):
        crc = zlib.crc32(zeros, crc)
    name = member.encode()
    # version 2.0, no flags, deflate, 1980-01-01 00:00, CRC, sizes, name length, no extra field
    fields = struct.pack("<HHHHHIIIHH", 20, 0, 8, 0, 0x21, crc, len(body), unpacked_bytes,
                         len(name), 0)  # fmt: skip
    local = b"PK\x03\x04" + fields + name
    central = b"PK\x01\x02" + struct.pack("<H", 20) + fields + struct.pack("<HHHII", 0, 0, 0, 0, 0)
    central += name
    end = b"PK\x05\x06" + struct.pack(
        "<HHHHIIH", 0, 0, 1, 1, len(central), len(local) + len(body), 0
    )
    return local + body + central + end
