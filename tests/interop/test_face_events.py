"""``faces/events`` DOWN and UP, against the real daemon, ``cascade run``, read by python-ndn.

A permanent TCP face to a listener the test runs: the test closes the connection and the
listener (the router's redial fails), then listens again on the same port (the redial, with
NFD's back-off, succeeds). A face monitor (one Interest per notification, as ndn-cxx's
FaceMonitor) sees CREATED, DOWN, UP for that face, in that order; every notification and face
field is decoded by python-ndn (``ndn.app_support.nfd_mgmt``).

``CASCADE_BIN`` names the cascade binary (the suite's runner sets it).
"""

from __future__ import annotations

import asyncio
import socket

from ndn.app import NDNApp
from ndn.app_support.nfd_mgmt import FaceEventKind

from test_mgmt_nfd import Monitor, _run, command
from test_router import router  # noqa: F401  (the daemon fixture)

PERMANENT = 2


def _listen(port: int = 0) -> socket.socket:
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(("127.0.0.1", port))
    s.listen(4)
    s.setblocking(False)
    return s


async def _accept(listener: socket.socket) -> socket.socket:
    loop = asyncio.get_running_loop()
    conn, _ = await loop.sock_accept(listener)
    return conn


def test_a_permanent_tcp_face_reports_down_then_up(router):
    async def scenario(app: NDNApp):
        monitor = Monitor(app)
        watching = asyncio.create_task(monitor.run())
        listener = _listen()
        port = listener.getsockname()[1]
        uri = "tcp4://127.0.0.1:%d" % port
        accepting = asyncio.create_task(_accept(listener))
        made = await command(app, "create", uri=uri, face_persistency=PERMANENT)
        assert made["status_code"] == 200, made
        face_id = made["face_id"]
        conn = await asyncio.wait_for(accepting, 5)

        async def seen(kind: FaceEventKind) -> int:
            while (kind, face_id, uri) not in monitor.events:
                if watching.done():
                    watching.result()
                await asyncio.sleep(0.01)
            return monitor.events.index((kind, face_id, uri))

        created = await seen(FaceEventKind.CREATED)
        # The peer goes away: nothing listens for the redial any more (closed first, so that
        # a redial cannot reach its backlog), and the connection ends.
        listener.close()
        conn.close()
        down = await seen(FaceEventKind.DOWN)
        # The peer comes back on the same port: the face redials it and comes up.
        listener = _listen(port)
        accepting = asyncio.create_task(_accept(listener))
        conn = await asyncio.wait_for(accepting, 15)
        up = await seen(FaceEventKind.UP)
        assert created < down < up, monitor.events
        ours = [k for (k, f, _u) in monitor.events if f == face_id]
        assert ours == [FaceEventKind.CREATED, FaceEventKind.DOWN, FaceEventKind.UP], ours
        # One Interest per notification, plus the one waiting for the next.
        await asyncio.sleep(0.3)
        assert not watching.done(), "the stream answered with something else"
        assert monitor.interests == len(monitor.events) + 1
        watching.cancel()
        gone = await command(app, "destroy", face_id=face_id)
        assert gone["status_code"] == 200, gone
        conn.close()
        listener.close()

    _run(router, scenario)
