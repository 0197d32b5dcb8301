"""Unmodified python-ndn applications talking to the real daemon, ``cascade run``.

A python-ndn producer registers a prefix through Cascade's NFD management protocol
(``rib/register`` as python-ndn signs it) and a python-ndn consumer fetches through the router,
over the Unix socket, with two forwarding workers so that packets cross workers. python-ndn's
``NDNApp`` does not echo NDNLPv2 PIT tokens, so Data reach the right worker by name.

``CASCADE_BIN`` names the cascade binary (the suite's runner sets it).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import subprocess
import tempfile
import time
from pathlib import Path

import pytest
from ndn.app import NDNApp
from ndn.encoding import Component, Name
from ndn.security import KeychainDigest
from ndn.transport.stream_face import UnixFace
from ndn.types import InterestNack


def _bin() -> str:
    b = os.environ.get("CASCADE_BIN")
    if b:
        return b
    root = Path(__file__).resolve().parents[2]
    subprocess.run(["cargo", "build", "-q", "-p", "cascade"], cwd=root, check=True)
    return str(root / "target" / "debug" / "cascade")


@contextlib.contextmanager
def running_router(config: str = ""):
    """``cascade run`` with two workers on a Unix socket in a temporary directory, with this
    configuration file; yields the socket's path."""
    with tempfile.TemporaryDirectory() as d:
        sock = os.path.join(d, "nfd.sock")
        conf = os.path.join(d, "cascade.toml")
        with open(conf, "w") as f:
            f.write(config)
        p = subprocess.Popen(
            [_bin(), "run", "-c", conf, "--unix", sock, "--tcp", "", "--udp", "", "--websocket", "",
             "--http", "", "--workers", "2"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            t0 = time.time()
            while not os.path.exists(sock):
                assert time.time() - t0 < 10, "cascade run did not start"
                assert p.poll() is None, "cascade run exited"
                time.sleep(0.02)
            yield sock
        finally:
            p.terminate()
            assert p.wait(timeout=10) == 0, "clean stop on SIGTERM"


@pytest.fixture()
def router():
    with running_router() as sock:
        yield sock


def _apps(sock: str) -> tuple[NDNApp, NDNApp]:
    kc = KeychainDigest()
    return NDNApp(face=UnixFace(sock), keychain=kc), NDNApp(face=UnixFace(sock), keychain=kc)


def _run(sock: str, scenario) -> None:
    prod, cons = _apps(sock)

    async def main():
        tasks = [asyncio.create_task(prod.main_loop()), asyncio.create_task(cons.main_loop())]
        try:
            await asyncio.wait_for(scenario(prod, cons), timeout=30)
        finally:
            prod.shutdown()
            cons.shutdown()
            for t in tasks:
                t.cancel()

    asyncio.run(main())


async def _register(app: NDNApp, prefix: str, handler) -> None:
    """Registers ``prefix`` through the router's ``rib/register`` once ``app`` is connected, and
    waits for the router's answer (a fixed sleep raced a slow registration on a loaded machine)."""
    while not app.face.running:
        await asyncio.sleep(0.005)
    assert await app.register(prefix, handler), f"rib/register {prefix} refused"


def test_python_ndn_producer_and_consumer_through_cascade(router):
    async def scenario(prod: NDNApp, cons: NDNApp):
        served = []

        def on_interest(name, _param, _app_param):
            served.append(Name.to_str(name))
            prod.put_data(name, content=b"hello " + Name.to_str(name).encode(), freshness_period=1000)

        await _register(prod, "/py/hello", on_interest)
        for i in range(20):
            name, _meta, content = await cons.express_interest(
                f"/py/hello/{i}", must_be_fresh=True, can_be_prefix=False, lifetime=2000
            )
            assert Name.to_str(name) == f"/py/hello/{i}"
            assert bytes(content) == b"hello " + f"/py/hello/{i}".encode()
        assert len(served) == 20

    _run(router, scenario)


def test_can_be_prefix_reaches_a_longer_data_name(router):
    async def scenario(prod: NDNApp, cons: NDNApp):
        def on_interest(name, _param, _app_param):
            full = Name.normalize(name) + [Component.from_version(7), Component.from_segment(0)]
            prod.put_data(full, content=b"segment zero", freshness_period=1000)

        await _register(prod, "/py/file", on_interest)
        for i in range(8):
            name, _meta, content = await cons.express_interest(
                f"/py/file/{i}", must_be_fresh=True, can_be_prefix=True, lifetime=2000
            )
            assert Name.to_str(name).startswith(f"/py/file/{i}/")
            assert bytes(content) == b"segment zero"

    _run(router, scenario)


def test_unrouted_interest_is_nacked(router):
    async def scenario(_prod: NDNApp, cons: NDNApp):
        await asyncio.sleep(0.2)
        with pytest.raises(InterestNack) as e:
            await cons.express_interest("/nobody/here", lifetime=1000)
        assert e.value.reason == 150  # NoRoute

    _run(router, scenario)
