"""Cascade's RIB against unmodified python-ndn applications, through ``cascade run``.

- An app registered under a child prefix (``/ndn/grp``) keeps the uplink of the parent
  (``/ndn``, ChildInherit): with best-route the Interest goes to the cheaper parent producer,
  with multicast to both; a Capture route on the child hides the parent's.
- ``rib/list``, ``fib/list`` and ``strategy-choice/list`` are parsed by python-ndn's models
  (``ndn.app_support.nfd_mgmt``): expiration periods, the inherited next hops, NFD's default
  strategy choices.
- Readvertising to NLSR (``[rib] readvertise_nlsr = true``): a fake NLSR (a python-ndn app that
  registers ``/localhost/nlsr`` and serves ``/localhost/nlsr/rib``) records the
  ``rib/register`` and ``rib/unregister`` commands the router sends it for client routes.

``CASCADE_BIN`` names the cascade binary (the suite's runner sets it).
"""

from __future__ import annotations

import asyncio

from ndn.app import NDNApp
from ndn.app_support.nfd_mgmt import (
    ControlParameters,
    ControlResponse,
    FibStatus,
    RibStatus,
    StrategyChoiceMsg,
    make_command,
    parse_response,
)
from ndn.encoding import Name, parse_and_check_tl
from ndn.security import KeychainDigest
from ndn.transport.stream_face import UnixFace
from ndn.types import InterestTimeout

from test_router import running_router

CHILD_INHERIT, CAPTURE = 1, 2


def run_apps(sock: str, n: int, scenario) -> None:
    """Runs ``scenario(*apps)`` with ``n`` connected python-ndn apps."""
    apps = [NDNApp(face=UnixFace(sock), keychain=KeychainDigest()) for _ in range(n)]

    async def main():
        tasks = [asyncio.create_task(a.main_loop()) for a in apps]
        try:
            for a in apps:
                while not a.face.running:
                    await asyncio.sleep(0.005)
            await asyncio.wait_for(scenario(*apps), timeout=30)
        finally:
            for a in apps:
                a.shutdown()
            for t in tasks:
                t.cancel()

    asyncio.run(main())


async def command(app: NDNApp, module: str, verb: str, **params) -> dict:
    _name, _meta, content = await app.express_interest(
        make_command(module, verb, app.face, **params), lifetime=4000
    )
    cr = ControlResponse.parse(parse_and_check_tl(memoryview(content), 0x65))
    if cr.body is None:  # a refusal: python-ndn's parse_response wants a body
        return {"status_code": cr.status_code, "status_text": str(cr.status_text)}
    return parse_response(content)


async def register(app: NDNApp, prefix: str, handler=None, **params) -> None:
    """``rib/register`` with these ControlParameters (cost, flags, origin, ...), and an Interest
    filter for ``handler``."""
    r = await command(app, "rib", "register", name=Name.from_str(prefix), **params)
    assert r["status_code"] == 200, r
    if handler is not None:
        app.set_interest_filter(prefix, handler)


async def dataset(app: NDNApp, what: str) -> bytes:
    _name, _meta, content = await app.express_interest(
        f"/localhost/nfd/{what}", can_be_prefix=True, must_be_fresh=True, lifetime=4000
    )
    return bytes(content)


def producer(app: NDNApp, label: bytes, seen: list[str] | None = None):
    def on_interest(name, _param, _app_param):
        if seen is not None:
            seen.append(Name.to_str(name))
        app.put_data(name, content=label, freshness_period=0)

    return on_interest


def silent(seen: list[str]):
    def on_interest(name, _param, _app_param):
        seen.append(Name.to_str(name))

    return on_interest


def test_a_child_prefix_keeps_the_parents_uplink():
    async def scenario(parent: NDNApp, child: NDNApp, consumer: NDNApp):
        at_parent: list[str] = []
        at_child: list[str] = []
        # The uplink: /ndn, ChildInherit (NFD's default flags), cost 10.
        await register(parent, "/ndn", producer(parent, b"parent", at_parent), cost=10)
        # A sync-group app under it that does not answer: /ndn/grp, cost 20.
        await register(child, "/ndn/grp", silent(at_child), cost=20)
        # Best-route: /ndn/grp's FIB entry has both, the inherited uplink is the cheaper.
        _n, _m, content = await consumer.express_interest(
            "/ndn/grp/x", must_be_fresh=True, lifetime=2000
        )
        assert bytes(content) == b"parent"
        assert at_parent == ["/ndn/grp/x"] and at_child == []
        fib = FibStatus.parse(await dataset(consumer, "fib/list"))
        hops = {
            Name.to_str(e.name): sorted((h.face_id, h.cost) for h in e.next_hop_records)
            for e in fib.entries
        }
        assert [c for _f, c in hops["/ndn/grp"]] in ([10, 20], [20, 10]) and len(hops["/ndn"]) == 1
        # Multicast on /ndn/grp: both get the Interest, the parent answers.
        r = await command(
            consumer,
            "strategy-choice",
            "set",
            name=Name.from_str("/ndn/grp"),
            strategy=Name.from_str("/localhost/nfd/strategy/multicast"),
        )
        assert r["status_code"] == 200, r
        _n, _m, content = await consumer.express_interest(
            "/ndn/grp/y", must_be_fresh=True, lifetime=2000
        )
        assert bytes(content) == b"parent"
        assert "/ndn/grp/y" in at_parent
        for _ in range(100):
            if "/ndn/grp/y" in at_child:
                break
            await asyncio.sleep(0.01)
        assert "/ndn/grp/y" in at_child
        # The child unregisters: /ndn/grp's entry goes, the parent still answers by /ndn.
        r = await command(child, "rib", "unregister", name=Name.from_str("/ndn/grp"))
        assert r["status_code"] == 200, r
        _n, _m, content = await consumer.express_interest(
            "/ndn/grp/z", must_be_fresh=True, lifetime=2000
        )
        assert bytes(content) == b"parent"

    with running_router() as sock:
        run_apps(sock, 3, scenario)


def test_a_capture_route_hides_the_parents():
    async def scenario(parent: NDNApp, child: NDNApp, consumer: NDNApp):
        await register(parent, "/ndn", producer(parent, b"parent"), cost=10)
        await register(child, "/ndn/grp", producer(child, b"child"), cost=20, flags=CAPTURE)
        _n, _m, content = await consumer.express_interest(
            "/ndn/grp/x", must_be_fresh=True, lifetime=2000
        )
        assert bytes(content) == b"child"
        # rib/list: the routes as registered, with their flags and expiration periods.
        await register(consumer, "/tmp/route", origin=65, expiration_period=60000)
        rib = RibStatus.parse(await dataset(consumer, "rib/list"))
        entries = {Name.to_str(e.name): e.routes for e in rib.entries}
        # NFD's RIB also holds management's own prefix, to its internal face (FaceId 1).
        assert set(entries) == {"/ndn", "/ndn/grp", "/tmp/route", "/localhost/nfd"}
        (mgmt,) = entries["/localhost/nfd"]
        assert (mgmt.face_id, mgmt.origin, mgmt.cost, mgmt.flags.value) == (1, 0, 0, CHILD_INHERIT)
        (grp,) = entries["/ndn/grp"]
        assert (grp.cost, grp.flags.value, grp.expiration_period) == (20, CAPTURE, None)
        (up,) = entries["/ndn"]
        assert (up.cost, up.flags.value) == (10, CHILD_INHERIT)
        (tmp,) = entries["/tmp/route"]
        assert tmp.origin == 65 and 0 < tmp.expiration_period <= 60000
        # Only the child's face is a next hop of /ndn/grp.
        fib = FibStatus.parse(await dataset(consumer, "fib/list"))
        grp_hops = [e for e in fib.entries if Name.to_str(e.name) == "/ndn/grp"][0]
        assert [h.cost for h in grp_hops.next_hop_records] == [20]

    with running_router() as sock:
        run_apps(sock, 3, scenario)


def test_default_strategy_choices_and_versions():
    async def scenario(app: NDNApp):
        msg = StrategyChoiceMsg.parse(await dataset(app, "strategy-choice/list"))
        got = {Name.to_str(c.name): Name.to_str(c.strategy.name) for c in msg.strategy_choices}
        br = "/localhost/nfd/strategy/best-route/v=5"
        mc = "/localhost/nfd/strategy/multicast/v=5"
        assert got == {"/": br, "/localhost": mc, "/localhost/nfd": br, "/ndn/broadcast": mc}
        set_ = lambda s: command(  # noqa: E731
            app, "strategy-choice", "set", name=Name.from_str("/s"), strategy=Name.from_str(s)
        )
        r = await set_("/localhost/nfd/strategy/best-route")
        assert r["status_code"] == 200 and Name.to_str(r["strategy"].name) == br
        assert (await set_("/localhost/nfd/strategy/best-route/v=4"))["status_code"] == 409
        assert (await set_("/localhost/nfd/strategy/best-route/v=9"))["status_code"] == 404
        r = await set_("/localhost/nfd/strategy/asf/v=5/probing-interval~30000")
        assert r["status_code"] == 200, r
        assert Name.to_str(r["strategy"].name).startswith("/localhost/nfd/strategy/asf/v=")
        assert (await set_("/localhost/nfd/strategy/self-learning"))["status_code"] == 404
        bad = "/localhost/nfd/strategy/asf/v=5/probing-interval~10"
        assert (await set_(bad))["status_code"] == 409

    with running_router() as sock:
        run_apps(sock, 1, scenario)


def test_client_routes_are_readvertised_to_nlsr():
    async def scenario(nlsr: NDNApp, app: NDNApp):
        received: list[tuple[str, str]] = []

        def on_command(name, _param, _app_param):
            verb = bytes(Name.normalize(name)[3][2:]).decode()  # /localhost/nlsr/rib/<verb>
            cp = ControlParameters.parse(Name.normalize(name)[4][2:])
            received.append((verb, Name.to_str(cp.cp.name)))
            resp = ControlResponse()
            resp.status_code, resp.status_text = 200, "OK"
            nlsr.put_data(name, content=resp.encode(), freshness_period=0)

        # NLSR registers its command prefix with the router (origin app).
        await register(nlsr, "/localhost/nlsr", on_command)
        # A client route (origin 65) is readvertised; an app route (origin 0) is not.
        await register(app, "/app/chat", origin=65)
        await register(app, "/app/private", origin=0)
        for _ in range(200):
            if received:
                break
            await asyncio.sleep(0.01)
        assert received == [("register", "/app/chat")]
        r = await command(app, "rib", "unregister", name=Name.from_str("/app/chat"), origin=65)
        assert r["status_code"] == 200
        for _ in range(200):
            if len(received) == 2:
                break
            await asyncio.sleep(0.01)
        assert received == [("register", "/app/chat"), ("unregister", "/app/chat")]

    with running_router("[rib]\nreadvertise_nlsr = true\n") as sock:
        run_apps(sock, 2, scenario)


def test_readvertise_is_off_by_default():
    async def scenario(nlsr: NDNApp, app: NDNApp):
        received: list[str] = []
        await register(nlsr, "/localhost/nlsr", silent(received))
        await register(app, "/app/chat", origin=65)
        try:
            await app.express_interest("/localhost/nlsr/probe", lifetime=300)
        except InterestTimeout:
            pass
        assert received == ["/localhost/nlsr/probe"]

    with running_router() as sock:
        run_apps(sock, 2, scenario)
