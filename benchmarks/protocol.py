"""A Streamlit session without a browser: the messages a page sends and waits for.

The browser talks to the server over one WebSocket (``/_stcore/stream``) in protobuf messages:
it asks for a run of the script (``BackMsg.rerun_script``, with the link's query string, the
page and the widgets' values) and receives the elements drawn, then "script finished". Used by
the load generators (``classroom.py``, ``churn.py``), which need many sessions on two cores:
a session here costs a few kilobytes and no rendering, so the server's work is what they measure.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field

import websockets  # a dependency of the server Streamlit runs on
from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

#: Statuses of a finished run that are not an error. A run that ends early for a rerun (the
#: app switching to a corrected link) is followed by the rerun, which is waited for.
_DONE = (ForwardMsg.FINISHED_SUCCESSFULLY, ForwardMsg.FINISHED_FRAGMENT_RUN_SUCCESSFULLY)


@dataclass
class Run:
    """What one run of the script showed."""

    seconds: float  # from sending the request to the last "script finished"
    widgets: dict[str, str] = field(default_factory=dict)  # widget id -> element type
    errors: list[str] = field(default_factory=list)  # exceptions shown, failed runs
    bytes_received: int = 0


def rerun_message(query: str = "", page: str = "", widgets: dict[str, int] | None = None) -> bytes:
    """A request to run the script on ``page`` with the link's ``query`` string and integer
    ``widgets`` values (by widget id), as the browser sends it."""
    message = BackMsg()
    message.rerun_script.query_string = query
    message.rerun_script.page_name = page
    for widget_id, value in (widgets or {}).items():
        state = message.rerun_script.widget_states.widgets.add()
        state.id, state.int_value = widget_id, value
    return message.SerializeToString()


def connect(url: str):
    """Open a session on the server at ``url`` (http://host:port): an async context manager."""
    return websockets.connect(
        url.replace("http://", "ws://") + "/_stcore/stream",
        subprotocols=["streamlit"],
        max_size=None,
        open_timeout=60,
    )


async def run(socket, payload: bytes) -> Run:
    """Send one request and read until its run (and any rerun it asked for) has finished."""
    started = time.perf_counter()
    await socket.send(payload)
    result = Run(0.0)
    while True:
        raw = await socket.recv()
        result.bytes_received += len(raw)
        message = ForwardMsg()
        message.ParseFromString(raw)
        kind = message.WhichOneof("type")
        if kind == "delta" and message.delta.WhichOneof("type") == "new_element":
            element = message.delta.new_element
            name = element.WhichOneof("type")
            if name == "exception":
                result.errors.append(f"exception: {element.exception.message[:200]}")
            widget_id = getattr(getattr(element, name), "id", "")
            if widget_id:
                result.widgets[widget_id] = name
        elif kind == "script_finished":
            status = message.script_finished
            if status == ForwardMsg.FINISHED_EARLY_FOR_RERUN:
                continue
            if status not in _DONE:
                result.errors.append(f"run ended with status {status}")
            result.seconds = time.perf_counter() - started
            return result


async def under_load(
    server,
    sessions: Iterable[Awaitable],
    out: dict,
    settle: float,
    after: Callable[[], Awaitable] | None = None,
) -> dict:
    """Run ``sessions`` concurrently while ``server``'s resident memory is sampled every 0.1 s.

    Fills ``out`` (and returns it): "rss", the samples in MiB; "errors", each session's
    exception; "cpu", the server's CPU seconds while the sessions ran; "settled", its RSS
    ``settle`` seconds after them. ``after`` (still sampled) runs once that is read.
    """
    out.setdefault("errors", [])
    out.setdefault("rss", [])
    done = asyncio.Event()

    async def sample() -> None:
        while not done.is_set():
            out["rss"].append(server.memory_kib().get("VmRSS", 0) / 1024)
            await asyncio.sleep(0.1)

    sampler = asyncio.create_task(sample())
    cpu_before = server.cpu_seconds()
    results = await asyncio.gather(*sessions, return_exceptions=True)
    out["errors"] += [f"{type(r).__name__}: {r}" for r in results if isinstance(r, Exception)]
    out["cpu"] = server.cpu_seconds() - cpu_before
    await asyncio.sleep(settle)
    out["settled"] = server.memory_kib().get("VmRSS", 0) / 1024
    if after is not None:
        await after()
    done.set()
    await sampler
    return out
