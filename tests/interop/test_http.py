"""The router's HTTP endpoint (``[http]``) as a person and a Prometheus server see it.

- ``/metrics`` parses with the Prometheus client's own text-format parsers (the Prometheus
  text format and the stricter OpenMetrics one), and its ``cascade_forwarder_*`` counters agree
  with ``cascade ctl status --json`` (NFD's status/general) once traffic has stopped: the
  ``ctl`` request itself lands between two scrapes.
- ``/`` in headless Chromium (Debian's ``chromium``): the page polls ``/status.json``, fills the
  faces table and draws its graphs; the test reads the rendered DOM (the faces table's rows, the
  number of points the packet-rate canvas drew, which its script records in ``data-points``)
  and saves a screenshot (``target/http-status.png``).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import socket
import subprocess
import tempfile
import time
import urllib.request
from pathlib import Path

import pytest
from prometheus_client.openmetrics.parser import text_string_to_metric_families as om_families
from ndn.encoding import InterestParam, make_interest
from prometheus_client.parser import text_string_to_metric_families

from test_router import _bin, _register, _run

ROOT = Path(__file__).resolve().parents[2]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture()
def http_router():
    with tempfile.TemporaryDirectory() as d:
        sock = os.path.join(d, "nfd.sock")
        port = _free_port()
        p = subprocess.Popen(
            [_bin(), "run", "--unix", sock, "--tcp", "", "--udp", "", "--websocket", "",
             "--workers", "2", "--http", f"127.0.0.1:{port}"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        base = f"http://127.0.0.1:{port}"
        t0 = time.time()
        while True:
            assert p.poll() is None, "cascade run exited"
            assert time.time() - t0 < 10, "the HTTP endpoint did not come up"
            try:
                urllib.request.urlopen(base + "/", timeout=2).read()
                if os.path.exists(sock):
                    break
            except OSError:
                time.sleep(0.05)
        yield sock, base
        p.terminate()
        assert p.wait(timeout=10) == 0, "clean stop on SIGTERM"


def _traffic(sock: str, n: int = 20) -> None:
    """A python-ndn producer and consumer exchange ``n`` Interests and Data."""

    async def scenario(prod, cons):
        def on_interest(name, _param, _app_param):
            prod.put_data(name, content=b"x", freshness_period=1000)

        await _register(prod, "/http/test", on_interest)
        for i in range(n):
            await cons.express_interest(f"/http/test/{i}", must_be_fresh=True, lifetime=2000)

    _run(sock, scenario)


def _scrape(base: str) -> dict[str, float]:
    """``/metrics`` parsed both ways; the samples by name and labels."""
    text = urllib.request.urlopen(base + "/metrics", timeout=10).read().decode()
    assert text.endswith("# EOF\n")
    strict = {s.name for f in om_families(text) for s in f.samples}
    samples: dict[str, float] = {}
    for family in text_string_to_metric_families(text):
        for s in family.samples:
            key = s.name + ("{" + ",".join(f"{k}={v}" for k, v in sorted(s.labels.items())) + "}"
                            if s.labels else "")
            samples[key] = s.value
    assert strict and {k.split("{")[0] for k in samples} == strict
    return samples


def _ctl_status(sock: str) -> dict:
    out = subprocess.run(
        [_bin(), "ctl", "--transport", f"unix://{sock}", "--json", "status"],
        check=True, capture_output=True, text=True, timeout=20,
    ).stdout
    return json.loads(out)


def test_metrics_parse_and_agree_with_ctl_status(http_router):
    sock, base = http_router
    _traffic(sock)
    time.sleep(0.3)  # the apps' faces close; nothing else moves
    before = _scrape(base)
    status = _ctl_status(sock)
    # ctl's face closes after its answer; its counters join the closed faces' totals when
    # management hears of the close, so a scrape in between misses them for a moment.
    t0 = time.time()
    while True:
        after = _scrape(base)
        if after["cascade_forwarder_in_interests_total"] >= status["n_in_interests"]:
            break
        assert time.time() - t0 < 5, "ctl's own Interest never showed in /metrics"
        time.sleep(0.05)
    compared = 0
    for key, value in status.items():
        if not key.startswith("n_"):
            continue
        name = "cascade_forwarder_" + key[2:]
        if key.endswith("_entries"):
            assert before[name] == value == after[name], key
        else:
            name += "_total"
            # The ctl request (an Interest to management, its answer) counts in between.
            assert before[name] <= value <= after[name] <= before[name] + 4, (key, before[name], value, after[name])
        compared += 1
    assert compared == 13
    assert status["n_in_interests"] >= 20 and status["n_satisfied_interests"] >= 20
    # Per-worker and per-face families are there, with their labels.
    assert sum(v for k, v in after.items() if k.startswith("cascade_worker_in_interests_total{")) >= 20
    assert after['cascade_cs_capacity{tier=ram}'] == 65536
    assert any(k.startswith("cascade_worker_batch_seconds_bucket{") for k in after)


def _chromium() -> str:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    pytest.fail("headless Chromium is needed: apt-get install chromium (scripts/test.sh does)")


def test_status_page_renders_faces_and_graphs_in_chromium(http_router):
    sock, base = http_router
    _traffic(sock, 5)
    held = socket.socket(socket.AF_UNIX)  # a face that stays open for the table
    held.connect(sock)
    chromium = _chromium()
    with tempfile.TemporaryDirectory() as profile:
        common = [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                  f"--user-data-dir={profile}", "--virtual-time-budget=6000",
                  "--window-size=1280,1000"]
        dom = subprocess.run(common + ["--dump-dom", base + "/"], check=True,
                             capture_output=True, text=True, timeout=120).stdout
        shot = ROOT / "target" / "http-status.png"
        shot.parent.mkdir(exist_ok=True)
        subprocess.run(common + [f"--screenshot={shot}", base + "/"], check=True,
                       capture_output=True, timeout=120)
    body = re.search(r'<table id="faces">.*?<tbody>(.*?)</tbody>', dom, re.S)
    assert body, dom[:2000]
    rows = re.findall(r"<tr>(.*?)</tr>", body.group(1), re.S)
    assert rows, "the faces table is empty"
    cells = [re.findall(r"<td[^>]*>(.*?)</td>", r) for r in rows]
    assert any(c[1].startswith("fd://") or c[1].startswith("unix://") for c in cells), cells
    assert all(c[0].isdigit() for c in cells)
    points = re.search(r'<canvas id="rates" data-points="(\d+)"', dom)
    assert points and int(points.group(1)) > 0, "the packet-rate graph drew nothing"
    assert "/localhost/nfd/strategy/best-route" in dom  # the strategies table
    assert shot.stat().st_size > 10_000, "screenshot missing"
    held.close()


def test_face_metrics_agree_with_ctl_face_list(http_router):
    sock, base = http_router
    held = socket.socket(socket.AF_UNIX)
    held.connect(sock)
    held.sendall(bytes(make_interest("/no/route/here", InterestParam(lifetime=1000))))
    held.settimeout(5)
    assert held.recv(9000), "the router answers (a Nack: no route)"
    faces = [json.loads(line) for line in subprocess.run(
        [_bin(), "ctl", "--transport", f"unix://{sock}", "--json", "face", "list"],
        check=True, capture_output=True, text=True, timeout=20).stdout.splitlines() if line]
    mine = [f for f in faces if f["n_in_interests"] == 1 and f["n_out_nacks"] == 1]
    assert len(mine) == 1, faces
    f = mine[0]
    m = _scrape(base)
    labels = f"{{face={f['face_id']},remote={f['remote']}}}"
    for key in ("n_in_interests", "n_out_nacks", "n_in_bytes", "n_out_bytes", "n_out_data"):
        assert m[f"cascade_face_{key[2:]}_total{labels}"] == f[key], key
    held.close()
