"""Downloads under concurrent sessions: the server's RSS while a page's files are built (issue 40).

Starts its own server on a loopback port, opens ``--sessions`` protocol-level sessions on one
link (``--query``, on ``--view``), and in each asks for every download the page offers, one
after the other, as a click on each download button does: a ``deferred_file`` backend
operation (the server runs the button's callable and stores the file), then an HTTP GET of the
file's URL. The server's RSS is sampled every 100 ms from before the first request until
``--settle`` seconds after the last file arrived. The defaults are the largest files the
sidebar allows: the matrix NPY of the Heatmap and the Worked example at L 512 x d_model 8,192
(32 MiB, the cap), the RoPE lab's cos/sin cache at d_model 8,192. ``--after-runs N``: after
the settle, one new session runs the page N times (Streamlit drops orphaned download files at
the end of runs) and the RSS is read 5 s later.

    .venv/bin/python benchmarks/downloads.py --view heatmap --query "L=512&d=8192" --port 8641

Only the server it starts (on the loopback address) is contacted.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import time
import urllib.request
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from streamlit.proto.BackMsg_pb2 import BackMsg  # noqa: E402
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg  # noqa: E402

from benchmarks.harness import StreamlitServer  # noqa: E402
from benchmarks.protocol import connect, rerun_message, run, under_load  # noqa: E402
from dashboard import registry  # noqa: E402


async def _session(url: str, query: str, page: str, out: dict) -> None:
    async with connect(url) as socket:
        await socket.send(rerun_message(query, page))
        session_id, buttons = "", {}
        while True:  # the first run: the session's id and the download buttons
            message = ForwardMsg()
            message.ParseFromString(await socket.recv())
            kind = message.WhichOneof("type")
            if kind == "new_session":
                session_id = message.new_session.initialize.session_id
            elif kind == "delta" and message.delta.WhichOneof("type") == "new_element":
                element = message.delta.new_element
                name = element.WhichOneof("type")
                if name == "exception":
                    out["errors"].append(element.exception.message[:200])
                if name == "download_button" and element.download_button.deferred_file_id:
                    buttons[element.download_button.label] = (
                        element.download_button.deferred_file_id
                    )
            elif (
                kind == "script_finished"
                and message.script_finished != ForwardMsg.FINISHED_EARLY_FOR_RERUN
            ):
                break
        for label, file_id in buttons.items():
            request = BackMsg()
            operation = request.backend_operation_request
            operation.request_id, operation.session_id = str(uuid.uuid4()), session_id
            operation.deferred_file.file_id = file_id
            started = time.perf_counter()
            await socket.send(request.SerializeToString())
            while True:
                message = ForwardMsg()
                message.ParseFromString(await socket.recv())
                if message.WhichOneof("type") == "backend_operation_response":
                    response = message.backend_operation_response
                    break
            if response.error_msg:
                out["errors"].append(f"{label}: {response.error_msg}")
                continue
            file_url = response.deferred_file.url
            if file_url.startswith("/"):
                file_url = url + file_url
            size = len(await asyncio.to_thread(lambda u=file_url: urllib.request.urlopen(u).read()))
            out["files"].append((label, size, time.perf_counter() - started))


async def _measure(
    server, sessions: int, query: str, page: str, settle: float, after_runs: int = 0
) -> dict:
    out: dict = {"files": []}

    async def later_visitor() -> None:  # its runs make Streamlit drop orphaned download files
        async with connect(server.url) as socket:
            for _ in range(after_runs):
                await run(socket, rerun_message("", page))
        await asyncio.sleep(5)

    return await under_load(
        server,
        (_session(server.url, query, page, out) for _ in range(sessions)),
        out,
        settle,
        after=later_visitor if after_runs else None,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--view", choices=[v.slug for v in registry.VIEWS], default="heatmap")
    parser.add_argument("--query", default="L=512&d=8192")
    parser.add_argument("--sessions", type=int, default=6)
    parser.add_argument("--settle", type=float, default=25.0)
    parser.add_argument("--port", type=int, default=None)
    parser.add_argument(
        "--after-runs",
        type=int,
        default=0,
        help="then one new session runs the page (default link) this many times; RSS 5 s later",
    )
    arguments = parser.parse_args()
    if not 1 <= arguments.sessions <= 12:
        parser.error("1 to 12 sessions")
    view = registry.BY_SLUG[arguments.view]
    page = "" if view == registry.DEFAULT else view.slug
    load = os.getloadavg()[0]
    server = StreamlitServer()
    try:
        server.start(port=arguments.port)
        idle = server.memory_kib().get("VmRSS", 0) / 1024
        out = asyncio.run(
            _measure(
                server,
                arguments.sessions,
                arguments.query,
                page,
                arguments.settle,
                arguments.after_runs,
            )
        )
        after = server.memory_kib().get("VmRSS", 0) / 1024
    finally:
        server.stop()
    peak = max(out["rss"], default=0.0)
    sizes = {}
    for label, size, seconds in out["files"]:
        sizes.setdefault(label, []).append((size, seconds))
    print(
        f"{arguments.view} ?{arguments.query}, {arguments.sessions} sessions, "
        f"load average {load:.1f} at the start"
    )
    for label, got in sizes.items():
        print(
            f"    {label}: {len(got)} files of {got[0][0] / 2**20:.1f} MiB, "
            f"slowest {max(s for _, s in got):.1f} s"
        )
    print(
        f"    RSS idle {idle:.0f} MiB, max {peak:.0f} MiB "
        f"({(peak - idle) / arguments.sessions:.0f} MiB a session), "
        f"{arguments.settle:.0f} s after the last file {out['settled']:.0f} MiB; "
        f"{len(out['errors'])} errors"
    )
    print(
        f"    server CPU {out['cpu']:.1f} s ({out['cpu'] / arguments.sessions:.2f} s a session: "
        "its page run and files)"
    )
    if arguments.after_runs:
        print(f"    after {arguments.after_runs} runs of a new session: {after:.0f} MiB")
    for error in out["errors"][:5]:
        print(f"    {error}")


if __name__ == "__main__":
    main()
