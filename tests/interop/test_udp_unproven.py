"""A python-ndn consumer over UDP, which never acknowledges a TxSequence, under the unproven
budget (``[faces] unproven_send_bytes_per_s``).

Such a consumer never proves its address, so what the router sends it comes out of the budget
that bounds reflection; past the budget a packet is dropped and the face gets a proof probe (an
IDLE LpPacket: a TxSequence and no fragment) in its place. python-ndn must survive the probes
(it parses every LpPacket it receives) and still get every Data by re-expressing, and the
router must count what it dropped and probed. The budget here is the smallest the config
accepts (8,800 bytes/s), so that a handful of 1,000-byte Data exceed it. A probe goes out only
while the face has been sent less than it sent (at most one byte out per byte in), so the
consumer's Interests carry 2,000 bytes of ApplicationParameters, more than each Data.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import socket
import subprocess
import tempfile
import time
import urllib.request

from ndn.app import NDNApp
from ndn.security import KeychainDigest
from ndn.transport.stream_face import UnixFace
from ndn.transport.udp_face import UdpFace
from ndn.types import InterestNack, InterestTimeout

from test_router import _bin, _register

N_DATA = 40
CONTENT = bytes(range(250)) * 4  # 1,000 bytes
PARAMS = bytes(2000)


def _free_port(kind: int) -> int:
    with socket.socket(socket.AF_INET, kind) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _bounds(base: str) -> dict[str, float]:
    """``cascade_face_table_bounds_total`` by event, from ``/metrics``."""
    text = urllib.request.urlopen(base + "/metrics", timeout=5).read().decode()
    out: dict[str, float] = {}
    for m in re.finditer(r'^cascade_face_table_bounds_total\{event="([a-z_]+)"\} (\S+)$', text, re.M):
        out[m.group(1)] = float(m.group(2))
    return out


@contextlib.contextmanager
def _udp_router(config: str):
    """``cascade run`` with this configuration, a Unix socket, UDP and HTTP on free loopback
    ports; yields (socket path, UDP port, HTTP base URL)."""
    with tempfile.TemporaryDirectory() as d:
        sock = os.path.join(d, "nfd.sock")
        conf = os.path.join(d, "cascade.toml")
        with open(conf, "w") as f:
            f.write(config)
        udp = _free_port(socket.SOCK_DGRAM)
        http = _free_port(socket.SOCK_STREAM)
        p = subprocess.Popen(
            [_bin(), "run", "-c", conf, "--unix", sock, "--tcp", "", "--udp", f"127.0.0.1:{udp}",
             "--websocket", "", "--http", f"127.0.0.1:{http}", "--workers", "1"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        base = f"http://127.0.0.1:{http}"
        try:
            t0 = time.time()
            while True:
                assert p.poll() is None, "cascade run exited"
                assert time.time() - t0 < 10, "cascade run did not start"
                try:
                    urllib.request.urlopen(base + "/", timeout=2).read()
                    if os.path.exists(sock):
                        break
                except OSError:
                    time.sleep(0.05)
            yield sock, udp, base
        finally:
            p.terminate()
            assert p.wait(timeout=10) == 0, "clean stop on SIGTERM"


def test_python_ndn_over_udp_survives_probes_and_gets_every_data():
    with _udp_router("[faces]\nunproven_send_bytes_per_s = 8800\n") as (sock, udp, base):
        before = _bounds(base)
        attempts = _fetch_all(sock, udp, CONTENT, PARAMS)
        after = _bounds(base)
    dropped = after.get("unproven_budget", 0) - before.get("unproven_budget", 0)
    probes = after.get("unproven_probes", 0) - before.get("unproven_probes", 0)
    # The budget was exceeded (some Interests had to be re-expressed), what it dropped was
    # counted, and a probe went out in the place of dropped packets; python-ndn read them all
    # and kept fetching.
    assert attempts > N_DATA, attempts
    assert dropped >= 1, (before, after)
    assert probes >= 1, (before, after)
    assert after.get("proven_by_ack", 0) == before.get("proven_by_ack", 0), "python-ndn never acks"


def test_python_ndn_over_udp_gets_data_larger_than_an_ethernet_frame():
    """python-ndn does not reassemble NDNLPv2 fragments; with the default `faces.udp_mtu` (NFD's
    8800) the router sends each Data whole, so 6,000-byte Data reach it over UDP as they do
    from NFD."""
    big = bytes(range(200)) * 30
    with _udp_router("") as (sock, udp, _base):
        attempts = _fetch_all(sock, udp, big, b"")
    assert attempts == N_DATA, "every Data came at the first Interest"


def _fetch_all(sock: str, udp_port: int, content: bytes, params: bytes) -> int:
    """Serves ``N_DATA`` Data of ``content`` from a producer on the Unix socket and fetches each
    of them with a consumer over UDP whose Interests carry ``params`` (if any), 8 at a time,
    re-expressing after a timeout. Returns the Interests sent."""
    kc = KeychainDigest()
    prod = NDNApp(face=UnixFace(sock), keychain=kc)
    cons = NDNApp(face=UdpFace("127.0.0.1", udp_port), keychain=kc)
    attempts = 0

    async def one(i: int) -> None:
        nonlocal attempts
        for _ in range(60):
            attempts += 1
            try:
                _name, _meta, got = await cons.express_interest(
                    f"/py/udp/{i}", must_be_fresh=False, can_be_prefix=False, lifetime=500,
                    app_param=params or None,
                )
            except (InterestTimeout, InterestNack):
                continue
            assert bytes(got) == content
            return
        raise AssertionError(f"/py/udp/{i} never came")

    async def scenario() -> None:
        def on_interest(name, _param, _app_param):
            prod.put_data(name, content=content, freshness_period=60_000)

        await _register(prod, "/py/udp", on_interest)
        while not cons.face.running:
            await asyncio.sleep(0.005)
        gate = asyncio.Semaphore(8)

        async def gated(i: int) -> None:
            async with gate:
                await one(i)

        await asyncio.gather(*(gated(i) for i in range(N_DATA)))

    async def main() -> None:
        tasks = [asyncio.create_task(prod.main_loop()), asyncio.create_task(cons.main_loop())]
        try:
            await asyncio.wait_for(scenario(), timeout=90)
        finally:
            prod.shutdown()
            cons.shutdown()
            for t in tasks:
                t.cancel()

    asyncio.run(main())
    return attempts
