"""Uploads under concurrent sessions: the server's RSS while Check reads a large file (issue 40).

Starts its own server on a loopback port and opens ``--sessions`` protocol-level sessions on
the Check page (``?check=RoPE`` for a rotary file); each uploads the same file as the browser
does (a ``file_urls_request`` for an upload URL, an HTTP PUT of the file as a form, then a run
of the script with the file in the uploader's state) and waits for the page's answer. The files
are the largest the page takes (just under its 20,000,000-byte limit):

- ``csv``: a sinusoidal table as this app's CSV download writes it (shortest round-trip
  decimals), 3,9xx positions x d_model 256;
- ``npz``: a rotary cos/sin cache as transformers users dump it (``np.savez(cos=, sin=)``,
  float32, 19,500 positions x head_dim 128).

The server's RSS is sampled every 100 ms from before the first upload until ``--settle``
seconds after the last answer; the server's CPU over the uploads and runs is printed with the
first lines of what each page showed (alerts and errors), so a refusal is not counted as a
success.

    .venv/bin/python benchmarks/uploads.py --file csv --sessions 6 --port 8615

Only the server it starts (on the loopback address) is contacted.
"""

from __future__ import annotations

import argparse
import asyncio
import io
import os
import sys
import time
import urllib.request
import uuid
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from streamlit.proto.BackMsg_pb2 import BackMsg  # noqa: E402
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg  # noqa: E402
from streamlit.web.server.starlette.starlette_app_utils import (  # noqa: E402
    generate_xsrf_token_string,
)

import pe_core  # noqa: E402
from benchmarks.harness import StreamlitServer  # noqa: E402
from benchmarks.protocol import connect, under_load  # noqa: E402
from dashboard import uploads  # noqa: E402
from dashboard.config import Config  # noqa: E402
from dashboard.exports import encoding_csv  # noqa: E402

#: The uploads' names and queries: the page and what to check.
FILES = {"csv": ("table.csv", "check=sinusoidal"), "npz": ("cache.npz", "check=RoPE")}


def build(kind: str) -> bytes:
    """The largest file of ``kind`` the page takes (under ``uploads.MAX_BYTES``)."""
    if kind == "csv":
        text = encoding_csv(Config(4096, 256, 10_000.0, "vaswani"))
        lines = text.split(b"\n")
        while len(text) >= uploads.MAX_BYTES:  # whole rows off the end until it fits
            lines = lines[: -max(1, len(lines) // 100)]
            text = b"\n".join([*lines, b""])
        return text
    rope = pe_core.rope_from_config(
        {"hidden_size": 4096, "num_attention_heads": 32, "rope_theta": 500_000.0}
    )
    cos, sin = pe_core.rope_cos_sin(19_500, rope)
    buffer = io.BytesIO()
    np.savez(buffer, cos=cos, sin=sin)
    data = buffer.getvalue()
    assert len(data) < uploads.MAX_BYTES, len(data)
    return data


def _put(url: str, name: str, data: bytes, token: str) -> int:
    """The browser's upload: a multipart form with one file, the XSRF token in a cookie and a
    header (the page's own token, as the browser sends it)."""
    boundary = uuid.uuid4().hex
    body = (
        (
            f'--{boundary}\r\nContent-Disposition: form-data; name="file"; filename="{name}"\r\n'
            "Content-Type: application/octet-stream\r\n\r\n"
        ).encode()
        + data
        + f"\r\n--{boundary}--\r\n".encode()
    )
    request = urllib.request.Request(url, data=body, method="PUT")
    request.add_header("Content-Type", f"multipart/form-data; boundary={boundary}")
    request.add_header("Cookie", f"_streamlit_xsrf={token}")
    request.add_header("X-Xsrftoken", token)
    with urllib.request.urlopen(request, timeout=120) as answer:
        return answer.status


async def _read_run(socket, out: dict | None = None) -> tuple[str, str, list[str]]:
    """Read until the run finishes: (session id, uploader widget id, texts shown)."""
    session_id, uploader, texts = "", "", []
    while True:
        message = ForwardMsg()
        message.ParseFromString(await socket.recv())
        kind = message.WhichOneof("type")
        if kind == "new_session":
            session_id = message.new_session.initialize.session_id
        elif kind == "delta" and message.delta.WhichOneof("type") == "new_element":
            element = message.delta.new_element
            name = element.WhichOneof("type")
            if name == "file_uploader":
                uploader = element.file_uploader.id
            elif name == "alert":
                texts.append(f"[alert] {element.alert.body}")
            elif name == "exception":
                texts.append(f"exception: {element.exception.message}")
            elif name == "markdown" and element.markdown.body.strip():
                texts.append(element.markdown.body)
        elif (
            kind == "script_finished"
            and message.script_finished != ForwardMsg.FINISHED_EARLY_FOR_RERUN
        ):
            return session_id, uploader, texts


async def _session(url: str, query: str, name: str, data: bytes, out: dict) -> None:
    token = generate_xsrf_token_string()
    async with connect(url) as socket:
        first = BackMsg()
        first.rerun_script.query_string, first.rerun_script.page_name = query, "check"
        await socket.send(first.SerializeToString())
        session_id, uploader, _ = await _read_run(socket)
        started = time.perf_counter()
        request = BackMsg()
        request.file_urls_request.request_id = str(uuid.uuid4())
        request.file_urls_request.session_id = session_id
        request.file_urls_request.file_names.append(name)
        await socket.send(request.SerializeToString())
        while True:
            message = ForwardMsg()
            message.ParseFromString(await socket.recv())
            if message.WhichOneof("type") == "file_urls_response":
                urls = message.file_urls_response.file_urls[0]
                break
        upload_url = urls.upload_url if "://" in urls.upload_url else url + urls.upload_url
        await asyncio.to_thread(_put, upload_url, name, data, token)
        uploaded = time.perf_counter()
        rerun = BackMsg()
        rerun.rerun_script.query_string, rerun.rerun_script.page_name = query, "check"
        state = rerun.rerun_script.widget_states.widgets.add()
        state.id = uploader
        info = state.file_uploader_state_value.uploaded_file_info.add()
        info.name, info.size, info.file_id = name, len(data), urls.file_id
        info.file_urls.CopyFrom(urls)
        await socket.send(rerun.SerializeToString())
        _, _, texts = await _read_run(socket)
        out["sessions"].append((uploaded - started, time.perf_counter() - uploaded, texts))


async def _measure(server, sessions: int, query: str, name: str, data: bytes, settle: float):
    out: dict = {"sessions": []}
    return await under_load(
        server, (_session(server.url, query, name, data, out) for _ in range(sessions)), out, settle
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--file", choices=sorted(FILES), default="csv")
    parser.add_argument("--sessions", type=int, default=6)
    parser.add_argument("--settle", type=float, default=25.0)
    parser.add_argument("--port", type=int, default=None)
    arguments = parser.parse_args()
    if not 1 <= arguments.sessions <= 12:
        parser.error("1 to 12 sessions")
    name, query = FILES[arguments.file]
    data = build(arguments.file)
    load = os.getloadavg()[0]
    server = StreamlitServer()
    try:
        server.start(port=arguments.port)
        idle = server.memory_kib().get("VmRSS", 0) / 1024
        out = asyncio.run(_measure(server, arguments.sessions, query, name, data, arguments.settle))
    finally:
        server.stop()
    peak = max(out["rss"], default=0.0)
    print(
        f"check ?{query}, {arguments.sessions} sessions uploading {name} "
        f"({len(data):,} bytes), load average {load:.1f} at the start"
    )
    print(
        f"    RSS idle {idle:.0f} MiB, max {peak:.0f} MiB "
        f"({(peak - idle) / arguments.sessions:.0f} MiB a session), "
        f"{arguments.settle:.0f} s after the last answer {out['settled']:.0f} MiB; "
        f"server CPU {out['cpu']:.1f} s; {len(out['errors'])} errors"
    )
    if out["sessions"]:
        slowest = max(s[0] + s[1] for s in out["sessions"])
        print(f"    {len(out['sessions'])} answered, slowest {slowest:.1f} s from the upload")
        texts = out["sessions"][0][2]  # the alerts, else the page's last lines
        for text in [t for t in texts if t.startswith(("[alert]", "exception"))] or texts[-2:]:
            print(f"    shown: {' '.join(text.split())[:160]}")
    for error in out["errors"][:5]:
        print(f"    {error}")


if __name__ == "__main__":
    main()
