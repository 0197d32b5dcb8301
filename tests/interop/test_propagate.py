"""Prefix propagation between two real Cascade routers over UDP (NFD's ``auto_prefix_propagate``
on the end host, ``localhop_security`` on the hub).

The end host's key chain (made by python-ndn; ``NDN_CLIENT_PIB``/``NDN_CLIENT_TPM``) has the
identity ``/a``; its router has a UDP face to the hub, a ``/localhop/nfd`` route over it and
``[rib.auto_prefix_propagate]``. An app (python-ndn) registers ``/a/b`` on the end host: the end
host registers ``/a`` at the hub, signed by ``/a``'s key; the hub, whose trust anchor is ``/a``'s
certificate, verifies it and routes ``/a`` toward the end host, so a python-ndn consumer on the
hub fetches the app's Data. A second end host whose identity ``/evil`` the hub does not trust is
refused: no route, and the refusal counted in the hub's ``/metrics``.

``CASCADE_BIN`` names the cascade binary (the suite's runner sets it).
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import os
import re
import subprocess
import tempfile
import time
import urllib.request

from ndn.app import NDNApp
from ndn.security import KeychainDigest
from ndn.transport.stream_face import UnixFace

from test_auth import keychain
from test_router import _bin


@contextlib.contextmanager
def _router(d: str, tag: str, config: str, udp: str, http: str = "", env=None):
    """``cascade run`` with this configuration; yields its Unix socket and the UDP and HTTP
    addresses it bound (port 0 asks the system for one: read back from its log, so no port is
    picked and released before the router binds it)."""
    sock = os.path.join(d, f"{tag}.sock")
    conf = os.path.join(d, f"{tag}.toml")
    with open(conf, "w") as f:
        f.write(config)
    log_path = os.path.join(d, f"{tag}.log")
    log = open(log_path, "w")
    p = subprocess.Popen(
        [_bin(), "run", "-c", conf, "--unix", sock, "--tcp", "", "--udp", udp,
         "--websocket", "", "--http", http, "--workers", "1"],
        stdout=log, stderr=subprocess.STDOUT, env=env,
    )
    try:
        t0 = time.time()
        while True:
            with open(log_path) as f:
                text = f.read()
            started = re.search(r"cascade: forwarding .*", text)
            if os.path.exists(sock) and started and (not http or "status page" in text):
                break
            assert p.poll() is None, text
            assert time.time() - t0 < 10, "cascade run did not start"
            time.sleep(0.02)
        bound_udp = re.search(r"udp (\S+:\d+)", started.group(0))
        bound_http = re.search(r"status page http://(\S+:\d+)/", text)
        yield sock, bound_udp and bound_udp.group(1), bound_http and bound_http.group(1)
    finally:
        p.terminate()
        p.wait(timeout=10)
        log.close()


def _host_env(d: str) -> dict:
    env = dict(os.environ)
    env["NDN_CLIENT_PIB"] = f"pib-sqlite3:{d}"
    env["NDN_CLIENT_TPM"] = f"tpm-file:{os.path.join(d, 'ndnsec-key-file')}"
    return env


def _host_config(hub_udp: str) -> str:
    hub = f"udp4://{hub_udp}"
    return (
        f'[[face]]\nuri = "{hub}"\n'
        f'[[route]]\nprefix = "/localhop/nfd"\nface = "{hub}"\n'
        "[rib.auto_prefix_propagate]\nrefresh_interval_s = 2\n"
    )


def _routes(sock: str) -> str:
    p = subprocess.run([_bin(), "ctl", "--transport", f"unix://{sock}", "route", "list"],
                       capture_output=True, text=True, timeout=10)
    assert p.returncode == 0, p.stderr
    return p.stdout


def _refused(http: str, reason: str) -> float:
    text = urllib.request.urlopen(f"http://{http}/metrics", timeout=10).read().decode()
    return sum(
        float(line.rsplit(" ", 1)[1])
        for line in text.splitlines()
        if line.startswith("cascade_mgmt_commands_refused_total")
        and f'reason="{reason}"' in line
    )


def test_an_end_host_propagates_its_identity_to_a_hub_that_verifies_it():
    with tempfile.TemporaryDirectory() as d:
        good, evil = os.path.join(d, "good"), os.path.join(d, "evil")
        os.makedirs(good)
        os.makedirs(evil)
        cert = keychain(good).touch_identity("/a").default_key().default_cert()
        keychain(evil).touch_identity("/evil")
        anchor = os.path.join(d, "a.ndncert")
        with open(anchor, "w") as f:
            f.write(base64.encodebytes(bytes(cert.data)).decode())
        hub_config = (
            "[rib]\nlocalhop = true\n"
            f'[[rib.localhop_trust_anchor]]\ntype = "file"\nfile_name = "{anchor}"\n'
        )
        with _router(d, "hub", hub_config, "127.0.0.1:0", "127.0.0.1:0") as (hub, hub_udp, http), \
                _router(d, "host", _host_config(hub_udp), "127.0.0.1:0", env=_host_env(good)) as (host, _, _), \
                _router(d, "evil", _host_config(hub_udp), "127.0.0.1:0", env=_host_env(evil)) as (bad, _, _):
            producer = NDNApp(face=UnixFace(host), keychain=KeychainDigest())
            evil_app = NDNApp(face=UnixFace(bad), keychain=KeychainDigest())
            consumer = NDNApp(face=UnixFace(hub), keychain=KeychainDigest())

            @producer.route("/a/b")
            def on_interest(name, _param, _app_param):
                producer.put_data(name, b"from the end host", freshness_period=1000)

            @evil_app.route("/evil/x")
            def on_evil(name, _param, _app_param):
                evil_app.put_data(name, b"no", freshness_period=1000)

            async def scenario():
                t0 = time.time()
                while "prefix=/a " not in _routes(hub):
                    assert time.time() - t0 < 20, _routes(hub)
                    await asyncio.sleep(0.2)
                assert "origin=client cost=15" in _routes(hub), _routes(hub)
                _n, _m, content = await consumer.express_interest(
                    "/a/b/c", lifetime=4000, must_be_fresh=True, can_be_prefix=False
                )
                assert bytes(content) == b"from the end host"
                # The untrusted end host: refused and counted, no route.
                t0 = time.time()
                while _refused(http, "unknown_key") < 1:
                    assert time.time() - t0 < 20, "the hub counted no refusal"
                    await asyncio.sleep(0.2)
                assert "evil" not in _routes(hub)

            async def main():
                tasks = [asyncio.create_task(a.main_loop()) for a in (producer, evil_app, consumer)]
                try:
                    await asyncio.wait_for(scenario(), timeout=60)
                finally:
                    for a in (producer, evil_app, consumer):
                        a.shutdown()
                    for t in tasks:
                        t.cancel()

            asyncio.run(main())
