"""python-ndn's NFD management models against the real daemon, ``cascade run``.

A face monitor subscribes to ``/localhost/nfd/faces/events`` as ndn-cxx's NotificationSubscriber
does (first Interest with CanBePrefix and MustBeFresh, then ``seq=<last+1>``) while faces are
created (and created again: 409) and destroyed through ``faces/create`` and ``faces/destroy``;
``faces/query`` is asked with a FaceQueryFilter. Everything is encoded and decoded by python-ndn
(``ndn.app_support.nfd_mgmt``), not by Cascade's codec.

``CASCADE_BIN`` names the cascade binary (the suite's runner sets it).
"""

from __future__ import annotations

import asyncio
import socket

from ndn.app import NDNApp
from ndn.app_support.nfd_mgmt import (
    FaceEventKind,
    FaceEventNotification,
    FaceQueryFilter,
    FaceQueryFilterValue,
    FaceStatusMsg,
    make_command,
    parse_response,
)
from ndn.encoding import Component, Name
from ndn.security import KeychainDigest
from ndn.transport.stream_face import UnixFace

from test_router import router  # noqa: F401  (the daemon fixture)

EVENTS = "/localhost/nfd/faces/events"


class Monitor:
    """ndn-cxx's FaceMonitor: one Interest per notification, the first one for the stream."""

    def __init__(self, app: NDNApp):
        self.app = app
        self.last: int | None = None
        self.interests = 0
        self.events: list[tuple[FaceEventKind, int, str]] = []

    async def next(self) -> None:
        if self.last is None:
            name, can_be_prefix, fresh = EVENTS, True, True
        else:
            name = Name.normalize(EVENTS) + [Component.from_sequence_num(self.last + 1)]
            can_be_prefix, fresh = False, False
        self.interests += 1
        data_name, meta, content = await self.app.express_interest(
            name, can_be_prefix=can_be_prefix, must_be_fresh=fresh, lifetime=60000
        )
        assert meta.freshness_period == 1000
        self.last = Component.to_number(data_name[-1])
        assert Name.normalize(EVENTS) == data_name[:-1]
        ev = FaceEventNotification.parse(content).event
        self.events.append((ev.face_event_kind, ev.face_id, str(ev.uri)))

    async def run(self) -> None:
        while True:
            await self.next()


async def command(app: NDNApp, verb: str, **params) -> dict:
    _name, _meta, content = await app.express_interest(
        make_command("faces", verb, app.face, **params), lifetime=4000
    )
    return parse_response(content)


async def query(app: NDNApp, **fields) -> list[int]:
    f = FaceQueryFilter()
    f.face_query_filter = FaceQueryFilterValue()
    for k, v in fields.items():
        setattr(f.face_query_filter, k, v)
    name = Name.from_str("/localhost/nfd/faces/query") + [Component.from_bytes(f.encode())]
    data_name, _meta, content = await app.express_interest(
        name, can_be_prefix=True, must_be_fresh=True, lifetime=4000
    )
    assert Component.get_type(data_name[-1]) == Component.TYPE_SEGMENT
    return [s.face_id for s in FaceStatusMsg.parse(content).face_status]


def _run(sock: str, scenario) -> None:
    app = NDNApp(face=UnixFace(sock), keychain=KeychainDigest())

    async def main():
        loop = asyncio.create_task(app.main_loop())
        try:
            while not app.face.running:
                await asyncio.sleep(0.005)
            await asyncio.wait_for(scenario(app), timeout=30)
        finally:
            app.shutdown()
            loop.cancel()

    asyncio.run(main())


def test_a_face_monitor_sees_created_and_destroyed_and_query_filters(router):
    async def scenario(app: NDNApp):
        monitor = Monitor(app)
        watching = asyncio.create_task(monitor.run())
        peer = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        peer.bind(("127.0.0.1", 0))
        uri = "udp4://127.0.0.1:%d" % peer.getsockname()[1]
        made = await command(app, "create", uri=uri)
        assert made["status_code"] == 200, made
        face_id = made["face_id"]
        assert made["uri"] == uri
        # A face to that remote exists: 409 with its parameters, as NFD answers.
        again = await command(app, "create", uri=uri)
        assert again["status_code"] == 409, again
        assert (again["face_id"], again["uri"]) == (face_id, uri)
        # faces/query: by scheme and by remote URI, only the UDP face; by FaceId, that face.
        assert await query(app, uri_scheme="udp4") == [face_id]
        assert await query(app, uri=uri) == [face_id]
        assert await query(app, face_id=face_id) == [face_id]
        assert await query(app, uri_scheme="tcp4") == []
        gone = await command(app, "destroy", face_id=face_id)
        assert gone["status_code"] == 200, gone
        while (FaceEventKind.DESTROYED, face_id, uri) not in monitor.events:
            if watching.done():
                watching.result()
            await asyncio.sleep(0.01)
        created = monitor.events.index((FaceEventKind.CREATED, face_id, uri))
        assert created < monitor.events.index((FaceEventKind.DESTROYED, face_id, uri))
        # Caught up, the monitor's Interest for the next sequence number waits: it is not
        # answered (an error Data would make it ask again at once), and the monitor has sent
        # one Interest per notification plus that one.
        await asyncio.sleep(0.5)
        assert not watching.done(), "the stream answered with something else"
        assert monitor.interests == len(monitor.events) + 1
        watching.cancel()
        peer.close()

    _run(router, scenario)
