"""Command line for other projects' CI: check a dumped RoPE cache (or inv_freq, or vectors
before and after rotation) against its config, or identify a sinusoidal table.

    python -m pe_core check-rope FILE [--config config.json] [--json]
    python -m pe_core check-gguf MODEL.gguf [--config config.json] [--ctx N] [--json]
    python -m pe_core identify FILE [--name NAME] [--json]

FILE is a .npy, .npz, .safetensors, .csv or .txt file (rows of numbers, numpy's print of an
array, or a list); every file is read only if it is a regular file within a size limit.

Exit status: 0 when the data matches (the config within its precision; without a config, a known
encoding with no bug found; for a GGUF file, no RoPE mistake in the file, llama.cpp's own
departures from transformers being reported, not counted), 1 when it does not, 2 for input that
cannot be read or that belongs to the other command (a sinusoidal table given to check-rope, a
rotary cache to identify).
"""

from __future__ import annotations

import argparse
import json
import sys
import warnings
from pathlib import Path

from pe_core.errors import InputError
from pe_core.files import (
    ACCEPTED,
    SINGLE_ARRAY_RULE,
    VECTOR_NAMES,
    read_arrays,
    read_bounded,
    read_config,
    table_array,
)
from pe_core.judgement import check_rope, check_table

__all__ = ["main"]

#: Exit statuses.
MATCHES, DIFFERS, UNREADABLE = 0, 1, 2


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m pe_core",
        description="Check a rotary (RoPE) cache or inv_freq against its config, or identify "
        "a sinusoidal encoding table. Exit 0: matches; 1: does not; 2: unreadable input.",
    )
    commands = parser.add_subparsers(dest="command", required=True)
    rope = commands.add_parser(
        "check-rope",
        help="name the RoPE behind a cos/sin cache, inv_freq, or vectors before and after "
        f"rotation ({ACCEPTED})",
        description="Arrays are found by name: vectors before and after rotation ("
        + ", ".join(f"{a} and {b}" for a, b in VECTOR_NAMES)
        + "; shape (..., positions, head_dim)), else cos and sin (or names containing them, "
        f"such as cos_cached), else inv_freq; positions (or position_ids). A .npy holds one "
        f"array: {SINGLE_ARRAY_RULE}.",
    )
    rope.add_argument("file", type=Path, metavar="FILE")
    rope.add_argument("--config", type=Path, help="the config.json the data should implement")
    rope.add_argument("--layer-type", help="layers of the config to compare with")
    rope.add_argument("--cos", help="name of the cos array (default: found by name)")
    rope.add_argument("--sin", help="name of the sin array")
    rope.add_argument("--inv-freq", dest="inv_freq", help="name of the inv_freq array")
    rope.add_argument("--before", help="name of the array of vectors before rotation")
    rope.add_argument("--after", help="name of the array of the same vectors after rotation")
    rope.add_argument("--positions", help="name of the positions array")
    rope.add_argument("--json", action="store_true", help="print the result as JSON")
    gguf = commands.add_parser(
        "check-gguf",
        help="does a GGUF file rotate as its config.json says, as llama.cpp runs it (reads the "
        "metadata and RoPE tensors only; a file cut after its metadata, or gguf-dump's text, "
        "is enough)",
    )
    gguf.add_argument("file", type=Path, metavar="MODEL.gguf")
    gguf.add_argument("--config", type=Path, help="the config.json the file was converted from")
    gguf.add_argument("--ctx", type=int, help="llama.cpp's context size -c (default: the file's)")
    gguf.add_argument("--json", action="store_true", help="print the result as JSON")
    table = commands.add_parser(
        "identify",
        help="name the convention, base and mistake behind a sinusoidal encoding table "
        f"({ACCEPTED})",
        description="The table has positions in rows (or columns). Text is read as the Check "
        "page reads a paste: comma or whitespace separated rows, numpy's print of an array, or "
        "a list (.tolist()); the digits it was written with count in the verdict.",
    )
    table.add_argument("file", type=Path, metavar="FILE")
    table.add_argument("--name", help="the array to read (default: the only one)")
    table.add_argument("--json", action="store_true", help="print the result as JSON")
    return parser


def _check_rope(args) -> int:
    arrays = read_arrays(args.file)
    config = None if args.config is None else read_config(args.config)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        found = check_rope(
            arrays,
            config=config,
            layer_type=args.layer_type,
            cos=args.cos,
            sin=args.sin,
            inv_freq=args.inv_freq,
            before=args.before,
            after=args.after,
            positions=args.positions,
            hint=" (name them with --before/--after, --cos/--sin or --inv-freq)",
        )
    if args.json:
        result = found.to_dict()
        result["warnings"] = [str(w.message) for w in caught]
        result["input"] = {name: written.to_dict() for name, written in arrays.written.items()}
        print(json.dumps(result, indent=1))
    else:
        print(found.summary())
        for w in caught:
            print(f"warning: {w.message}", file=sys.stderr)
    return MATCHES if found.matches else DIFFERS


def _identify(args) -> int:
    arrays = read_arrays(args.file)
    name, table = table_array(arrays, args.name)
    checked = check_table(table, written=arrays.written[name])
    if args.json:
        print(json.dumps(checked.to_dict(), indent=1))
    else:
        print(checked.summary())
    return MATCHES if checked.matches else DIFFERS


#: Most bytes of a pasted GGUF dump read by check-gguf.
_MAX_DUMP_BYTES = 2_000_000


def _check_gguf(args) -> int:
    from pe_core.rotary import check_gguf, parse_gguf_dump, read_gguf

    path = args.file
    head = read_bounded(path, max_bytes=None, head=4, what=f"FILE {str(path)!r}")
    if head == b"GGUF":
        meta = read_gguf(path)
    else:
        raw = read_bounded(path, max_bytes=_MAX_DUMP_BYTES, what=f"FILE {str(path)!r}")
        text = raw.decode("utf-8", errors="replace")
        if "\x00" in text or not text.strip():
            raise InputError(
                f"FILE {str(path)!r} is not a GGUF file (it does not start with b'GGUF') nor "
                "the text of gguf-dump"
            )
        try:
            meta = parse_gguf_dump(text)
        except InputError:
            raise InputError(
                f"FILE {str(path)!r} is not a GGUF file (it starts with {head!r}, a GGUF file "
                "with b'GGUF') nor the text of gguf-dump (no metadata line)"
            ) from None
    config = None
    if args.config is not None:
        config = read_config(args.config)
    if args.ctx is not None and args.ctx <= 0:
        raise InputError(f"--ctx must be a positive context size, got {args.ctx}")
    found = check_gguf(meta, config, n_ctx=args.ctx)
    if args.json:
        print(json.dumps(found.to_dict(), indent=1))
    else:
        print(found.summary())
    if config is None:
        return MATCHES
    return MATCHES if found.matches else DIFFERS


def main(argv: list[str] | None = None) -> int:
    """Run the command line; returns the exit status."""
    args = _parser().parse_args(argv)
    commands = {"check-rope": _check_rope, "check-gguf": _check_gguf, "identify": _identify}
    try:
        return commands[args.command](args)
    except InputError as error:
        print(f"error: {error}", file=sys.stderr)
        return UNREADABLE


if __name__ == "__main__":
    sys.exit(main())
