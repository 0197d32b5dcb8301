"""python-ndn against Cascade's application tools through the real daemon: the RDR metadata
``cascade put`` answers (as ndn-cxx's ``MetadataObject`` defines it: ``<prefix>/32=metadata``
answered by ``<prefix>/32=metadata/<version>/<segment 0>`` whose content is the versioned name as
a Name TLV), and ``cascade pingserver`` answering probes of ndnping's name shape
(``<prefix>/ping/<sequence number as decimal>``)."""

from __future__ import annotations

import asyncio
import subprocess
import time

from ndn.app import NDNApp
from ndn.encoding import Component, Name
from ndn.security import KeychainDigest
from ndn.transport.stream_face import UnixFace

from test_router import _bin, running_router


def _wait_route(sock: str, prefix: str) -> None:
    t0 = time.time()
    while True:
        out = subprocess.run(
            [_bin(), "ctl", "fib", "list", "--transport", f"unix://{sock}"], capture_output=True, text=True
        ).stdout
        if prefix in out:
            return
        assert time.time() - t0 < 10, f"{prefix} never registered"
        time.sleep(0.05)


def _consume(sock: str, scenario) -> None:
    app = NDNApp(face=UnixFace(sock), keychain=KeychainDigest())

    async def main():
        task = asyncio.create_task(app.main_loop())
        try:
            while not app.face.running:
                await asyncio.sleep(0.005)
            await asyncio.wait_for(scenario(app), timeout=30)
        finally:
            app.shutdown()
            task.cancel()

    asyncio.run(main())


def test_python_ndn_discovers_the_version_through_rdr_metadata(tmp_path):
    f = tmp_path / "in.bin"
    f.write_bytes(bytes(range(256)) * 40)
    with running_router() as sock:
        put = subprocess.Popen(
            [_bin(), "put", "/py/rdr", str(f), "--version", "99", "--transport", f"unix://{sock}"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            _wait_route(sock, "/py/rdr")

            async def scenario(app: NDNApp):
                name, meta, content = await app.express_interest(
                    "/py/rdr/32=metadata", must_be_fresh=True, can_be_prefix=True, lifetime=2000
                )
                name = Name.normalize(name)
                assert Name.to_str(name[:2]) == "/py/rdr"
                assert Component.get_type(name[2]) == Component.TYPE_KEYWORD
                assert Component.get_value(name[2]) == b"metadata"
                assert Component.get_type(name[3]) == Component.TYPE_VERSION
                assert Component.to_number(name[4]) == 0
                assert Component.get_type(name[4]) == Component.TYPE_SEGMENT
                assert meta.freshness_period is not None and meta.freshness_period > 0
                versioned = Name.from_bytes(bytes(content))
                assert Name.to_str(versioned) == Name.to_str("/py/rdr/v=99")
                # The versioned name leads to the segments.
                seg = versioned + [Component.from_segment(0)]
                got, _m, data = await app.express_interest(seg, lifetime=2000)
                assert Name.to_str(got) == Name.to_str(seg)
                assert bytes(data) == f.read_bytes()[:8000]

            _consume(sock, scenario)
        finally:
            put.terminate()
            put.wait(timeout=10)


def test_python_ndn_pings_cascade_pingserver(tmp_path):
    with running_router() as sock:
        server = subprocess.Popen(
            [_bin(), "pingserver", "/py/pingsrv", "-s", "16", "-p", "5", "--transport", f"unix://{sock}"],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        try:
            _wait_route(sock, "/py/pingsrv/ping")

            async def scenario(app: NDNApp):
                for seq in range(1000, 1005):
                    probe = Name.normalize("/py/pingsrv/ping") + [Component.from_str(str(seq))]
                    name, meta, content = await app.express_interest(
                        probe, must_be_fresh=True, can_be_prefix=False, lifetime=4000
                    )
                    assert Name.to_str(name) == f"/py/pingsrv/ping/{seq}"
                    assert meta.freshness_period == 1000
                    assert bytes(content) == b"a" * 16

            _consume(sock, scenario)
            out, _ = server.communicate(timeout=10)
            assert server.returncode == 0
            assert "interest received: seq=1004" in out
            assert "5 packets processed" in out
        finally:
            if server.poll() is None:
                server.terminate()
                server.wait(timeout=10)
