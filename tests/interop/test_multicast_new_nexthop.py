"""Multicast's afterNewNextHop through the real router (NFD 24.07's behaviour): a python-ndn
consumer's Interest under a multicast prefix arrives before any producer registers; it waits in
the PIT (multicast sends no Nack); ``cascade poke`` then registers the name within the
Interest's lifetime and the router sends the pending Interest to it, so the consumer gets the
Data. Under best-route the same Interest would get a Nack NoRoute at once.

``CASCADE_BIN`` names the cascade binary (the suite's runner sets it).
"""

from __future__ import annotations

import asyncio
import subprocess

from test_mgmt_nfd import _run
from test_router import _bin, running_router

MULTICAST = "/localhost/nfd/strategy/multicast"


def test_an_interest_sent_before_the_producer_registers_gets_its_data():
    with running_router() as sock:
        transport = ["--transport", f"unix://{sock}"]
        set_strategy = subprocess.run(
            [_bin(), "ctl", *transport, "strategy", "set", "prefix", "/late", "strategy",
             MULTICAST],
            capture_output=True, text=True, timeout=20,
        )
        assert set_strategy.returncode == 0, set_strategy.stderr
        pokes = []

        async def scenario(app):
            pending = asyncio.create_task(
                app.express_interest("/late/item", lifetime=6000, must_be_fresh=False)
            )
            # The Interest reaches the router and waits there, unrouted.
            await asyncio.sleep(0.5)
            assert not pending.done(), "no Nack under multicast"
            pokes.append(subprocess.Popen(
                [_bin(), "poke", "/late/item", "-w", "10000", *transport],
                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            ))
            pokes[0].stdin.write(b"registered late")
            pokes[0].stdin.close()
            _name, _meta, content = await pending
            assert bytes(content) == b"registered late"

        try:
            _run(sock, scenario)
            assert pokes[0].wait(timeout=10) == 0, pokes[0].stderr.read()
        finally:
            for p in pokes:
                if p.poll() is None:
                    p.kill()
                    p.wait()
