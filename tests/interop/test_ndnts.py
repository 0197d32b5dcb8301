"""NDNts (JavaScript, from npm) fetching through the real daemon, ``cascade run``.

The harness is ``tests/ndnts`` (its versions pinned in package.json and package-lock.json;
``npm ci`` there installs them, and this module runs it if ``node_modules`` is missing). Its
``fetch.mjs`` connects a logical NDNts forwarder to the router over any face URI
(``transport.mjs``: ``ws://``, ``wss://``, ``unix://``, ``tcp://``, ``udp://``; ``wss://``
trusting the committed test certificate through ``NODE_EXTRA_CA_CERTS``), expresses Interests and
checks each Data's name and content; its ``getfile.mjs`` fetches a file by prefix alone, through
RDR metadata (@ndn/rdr) and @ndn/segmented-object. The producer is ``cascade poke`` on the router's Unix
socket; it registers its name through the NFD management protocol and answers once, the
router's content store after that (``cascade put`` for the file).

``CASCADE_BIN`` names the cascade binary (the suite's runner sets it).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
import tempfile
import threading
import time
from pathlib import Path

import pytest

from test_router import _bin

NDNTS = Path(__file__).resolve().parents[1] / "ndnts"


@pytest.fixture(scope="module")
def ndnts() -> Path:
    """The harness, its packages installed."""
    if not all((NDNTS / "node_modules" / "@ndn" / m).is_dir() for m in ("ws-transport", "rdr", "segmented-object")):
        subprocess.run(["npm", "ci"], cwd=NDNTS, check=True)
    return NDNTS


FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "wss"


@pytest.fixture()
def router():
    """A router with its Unix socket and a WebSocket listener on a loopback port: (socket
    path, WebSocket port)."""
    yield from _router([])


@pytest.fixture()
def wss_router(tmp_path):
    """The same, its WebSocket listener serving ``wss://`` with the committed test
    certificate."""
    conf = tmp_path / "cascade.toml"
    conf.write_text(
        "[listen]\n"
        f"websocket_tls_cert = \"{FIXTURES / 'cert.pem'}\"\n"
        f"websocket_tls_key = \"{FIXTURES / 'key.pem'}\"\n"
    )
    yield from _router(["--config", str(conf)])


def _router(extra: list[str]):
    with tempfile.TemporaryDirectory() as d:
        sock = str(Path(d) / "nfd.sock")
        p = subprocess.Popen(
            [_bin(), "run", *extra, "--unix", sock, "--tcp", "", "--udp", "",
             "--websocket", "127.0.0.1:0", "--workers", "2"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        port = None
        for line in p.stderr:
            m = re.search(r"websocket 127\.0\.0\.1:(\d+)", line)
            if m:
                port = int(m.group(1))
                break
        assert port, "cascade run did not say where its WebSocket listener is"
        # Keep reading its log so that it never blocks on a full pipe.
        threading.Thread(target=p.stderr.read, daemon=True).start()
        yield sock, port
        p.terminate()
        assert p.wait(timeout=10) == 0, "clean stop on SIGTERM"


def _poke(sock: str, name: str, content: str) -> subprocess.Popen:
    """``cascade poke`` serving ``name``, once its route is in the router's RIB."""
    p = subprocess.Popen(
        [_bin(), "poke", name, "--transport", f"unix://{sock}", "--timeout", "20000"],
        stdin=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    p.stdin.write(content)
    p.stdin.close()
    t0 = time.time()
    while True:
        # Exit status 6 (nfdc's "Route not found") until the producer's route is there.
        routes = subprocess.run(
            [_bin(), "ctl", "--transport", f"unix://{sock}", "--json", "route", "list"],
            capture_output=True, text=True,
        ).stdout
        if name in routes:
            return p
        assert p.poll() is None, f"cascade poke exited: {p.stderr.read()}"
        assert time.time() - t0 < 10, "the producer's route did not appear"
        time.sleep(0.05)


def _fetch(ndnts: Path, uri: str, name: str, content: str, count: int = 1, env=None):
    return subprocess.run(
        ["node", "fetch.mjs", uri, name, content, str(count)],
        cwd=ndnts, capture_output=True, text=True, timeout=60, env=env,
    )


def test_ndnts_fetches_through_the_websocket_face(ndnts, router):
    sock, port = router
    poke = _poke(sock, "/ndnts/ws/hello", "hello over WebSocket")
    # Three Interests, one WebSocket message each way apiece: the producer answers the first,
    # the content store the others.
    r = _fetch(ndnts, f"ws://127.0.0.1:{port}", "/ndnts/ws/hello", "hello over WebSocket", 3)
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["fetched"] == 3
    assert out["name"] == "/8=ndnts/8=ws/8=hello"
    assert poke.wait(timeout=10) == 0
    # The checks bite: the same Data is not taken for other content.
    r = _fetch(ndnts, f"ws://127.0.0.1:{port}", "/ndnts/ws/hello", "something else")
    assert r.returncode == 1
    assert "content" in r.stderr


def test_ndnts_fetches_over_wss_trusting_the_test_certificate(ndnts, wss_router):
    sock, port = wss_router
    poke = _poke(sock, "/ndnts/wss/hello", "hello over wss")
    uri = f"wss://localhost:{port}"
    trusting = dict(os.environ, NODE_EXTRA_CA_CERTS=str(FIXTURES / "cert.pem"))
    r = _fetch(ndnts, uri, "/ndnts/wss/hello", "hello over wss", 2, env=trusting)
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["fetched"] == 2
    assert out["name"] == "/8=ndnts/8=wss/8=hello"
    assert poke.wait(timeout=10) == 0
    # Without the certificate in its trust store, Node refuses the connection.
    untrusting = {k: v for k, v in os.environ.items() if k != "NODE_EXTRA_CA_CERTS"}
    r = _fetch(ndnts, uri, "/ndnts/wss/hello", "hello over wss", env=untrusting)
    assert r.returncode == 1, r.stdout


def test_ndnts_fetches_over_the_unix_socket(ndnts, router):
    sock, _ = router
    poke = _poke(sock, "/ndnts/unix/hello", "hello over Unix")
    r = _fetch(ndnts, f"unix://{sock}", "/ndnts/unix/hello", "hello over Unix")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["fetched"] == 1
    assert poke.wait(timeout=10) == 0


def test_ndnts_fetches_a_file_by_prefix_through_rdr(ndnts, router, tmp_path):
    """NDNts finds the version of ``cascade put``'s file through RDR metadata (@ndn/rdr) and
    fetches its segments (@ndn/segmented-object), with nothing but the prefix."""
    sock, port = router
    src = tmp_path / "in.bin"
    src.write_bytes(bytes((i * 7) % 251 for i in range(50_000)))
    put = subprocess.Popen(
        [_bin(), "put", "/ndnts/file", str(src), "--version", "1234", "--transport", f"unix://{sock}"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        t0 = time.time()
        while "/ndnts/file" not in subprocess.run(
            [_bin(), "ctl", "--transport", f"unix://{sock}", "fib", "list"], capture_output=True, text=True
        ).stdout:
            assert time.time() - t0 < 10, "the producer's route did not appear"
            time.sleep(0.05)
        r = subprocess.run(
            ["node", "getfile.mjs", f"ws://127.0.0.1:{port}", "/ndnts/file"],
            cwd=ndnts, capture_output=True, text=True, timeout=60,
        )
        assert r.returncode == 0, r.stderr
        out = json.loads(r.stdout)
        assert out["versioned"] == "/8=ndnts/8=file/54=%04%D2"
        assert out["bytes"] == 50_000
        assert out["sha256"] == hashlib.sha256(src.read_bytes()).hexdigest()
    finally:
        put.terminate()
        put.wait(timeout=10)
