"""Readvertising to NLSR waits for NLSR's answers and retries as NFD's ``Readvertise`` does.

A fake NLSR (a python-ndn app that registers ``/localhost/nlsr``) first ignores the router's
``rib/register`` command, then answers it: the router retries the unanswered command (after the
command's 10 s lifetime and the retry delay, here ``readvertise_retry_ms = 1000`` doubled), and
after the success sends nothing more (the next advertisement is the hourly refresh). Another
client route is refused by NLSR at first and advertised again after the retry delay.

``CASCADE_BIN`` names the cascade binary (the suite's runner sets it).
"""

from __future__ import annotations

import asyncio

from ndn.app import NDNApp
from ndn.app_support.nfd_mgmt import ControlParameters, ControlResponse
from ndn.encoding import Name

from test_rib import register, run_apps
from test_router import running_router


def test_readvertisements_nlsr_ignores_or_refuses_are_retried_until_answered():
    async def scenario(nlsr: NDNApp, app: NDNApp):
        received: list[tuple[str, str]] = []
        ignore = {"/app/chat": 1, "/app/refused": 0}
        refuse = {"/app/chat": 0, "/app/refused": 1}

        def on_command(name, _param, _app_param):
            verb = bytes(Name.normalize(name)[3][2:]).decode()  # /localhost/nlsr/rib/<verb>
            cp = ControlParameters.parse(Name.normalize(name)[4][2:])
            prefix = Name.to_str(cp.cp.name)
            received.append((verb, prefix))
            if ignore.get(prefix, 0) > 0:
                ignore[prefix] -= 1
                return
            resp = ControlResponse()
            resp.status_code, resp.status_text = 200, "OK"
            if refuse.get(prefix, 0) > 0:
                refuse[prefix] -= 1
                resp.status_code, resp.status_text = 503, "busy"
            # The ControlResponse TLV (0x65) around python-ndn's encoding of its fields.
            inner = bytes(resp.encode())
            nlsr.put_data(name, content=bytes([0x65, len(inner)]) + inner, freshness_period=0)

        async def wait_for(n: int, seconds: float):
            for _ in range(int(seconds * 100)):
                if len(received) >= n:
                    return
                await asyncio.sleep(0.01)

        await register(nlsr, "/localhost/nlsr", on_command)
        await register(app, "/app/chat", origin=65)
        await register(app, "/app/refused", origin=65)
        await wait_for(2, 2)
        assert sorted(received) == [("register", "/app/chat"), ("register", "/app/refused")]
        # Refused: retried 2 s later (1 s doubled), then accepted.
        await wait_for(3, 5)
        assert received[2] == ("register", "/app/refused")
        # Unanswered: retried when its 10 s lifetime has passed, 2 s later.
        await wait_for(4, 15)
        assert received[3] == ("register", "/app/chat")
        # Both accepted: nothing more is sent (the next is the hourly refresh).
        await asyncio.sleep(3)
        assert len(received) == 4, received

    config = "[rib]\nreadvertise_nlsr = true\nreadvertise_retry_ms = 1000\n"
    with running_router(config) as sock:
        run_apps(sock, 2, scenario)
