"""A hub's ``localhop_security`` as NFD's: an ndn-cxx validator configuration file (NFD's sample
rules, one trust anchor) and certificate chains fetched from the face a command came from.

python-ndn makes the hierarchy of the NDN testbed: a root identity ``/ndn`` (the hub's trust
anchor, self-signed), a site ``/ndn/site`` whose certificate the root issued, and a user
``/ndn/site/alice`` whose certificate the site issued. A remote app (python-ndn's ``appv2``,
over UDP: a non-local face) sends ``/localhop/nfd/rib/register`` signed by the user's key, its
KeyLocator the user's certificate. The hub knows neither that certificate nor the site's: it
asks the app's face for each (Interests for the KeyLocator names, CanBePrefix), the app answers
them, the hub verifies root -> site -> user -> command, and the route appears. A user whose
certificate is self-signed (a chain that never reaches the anchor) is refused: 403, no route, and the refusal
counted in the hub's ``/metrics``. The same again with python-ndn's older ``ndn.app.NDNApp``,
which answers the hub's Interests without echoing their PIT tokens (NFD matches such an answer
in its PIT; the hub must too).

``CASCADE_BIN`` names the cascade binary (the suite's runner sets it).
"""

from __future__ import annotations

import asyncio
import base64
import os
import struct
import tempfile
from datetime import datetime, timedelta, timezone

from ndn.app_support.nfd_mgmt import ControlResponse, make_command_v2
from ndn.app_support.security_v2 import derive_cert
import pytest
from ndn.app import NDNApp as NDNAppV1
from ndn.appv2 import NDNApp, pass_all
from ndn.encoding import Component, Name, SignatureInfo, TypeNumber, parse_and_check_tl
from ndn.transport.udp_face import UdpFace
from ndn.utils import gen_nonce_64, timestamp

from test_auth import keychain
from test_propagate import _refused, _router, _routes

# NFD's nfd.conf.sample localhop_security, unchanged but for the anchor's file name.
POLICY = """
rule
{
  id "RIB Command Interest"
  for interest
  filter
  {
    type name
    regex ^<localhop><nfd><rib>[<register><unregister>]<>{1,3}$
  }
  checker
  {
    type customized
    sig-type ecdsa-sha256
    key-locator
    {
      type name
      regex ^<>*<KEY><>{1,3}$
    }
  }
}
rule
{
  id "NDN Testbed Certificate Hierarchy"
  for data
  filter
  {
    type name
    regex ^<>*<KEY><>{3}$
  }
  checker
  {
    type customized
    sig-type ecdsa-sha256
    key-locator
    {
      type name
      hyper-relation
      {
        k-regex ^(<>*)<KEY><>{1,3}$
        k-expand \\\\1
        h-relation is-prefix-of
        p-regex ^(<>*)$
        p-expand \\\\1
      }
    }
  }
}
trust-anchor
{
  type file
  file-name keys/root.ndncert
}
"""


def _localhop_command(signer, prefix: str) -> list:
    """``/localhop/nfd/rib/register`` for ``prefix`` in the command-Interest form (timestamp,
    nonce, SignatureInfo, SignatureValue), signed by ``signer``."""
    name = make_command_v2("rib", "register", None, name=prefix)
    name[0] = Component.from_str("localhop")
    name.append(Component.from_bytes(struct.pack("!Q", timestamp())))
    name.append(Component.from_bytes(struct.pack("!Q", gen_nonce_64())))
    info = SignatureInfo()
    signer.write_signature_info(info)
    buf = info.encode()
    name.append(Component.from_bytes(bytes([TypeNumber.SIGNATURE_INFO, len(buf)]) + buf))
    value = bytearray(signer.get_signature_value_size())
    n = signer.write_signature_value(memoryview(value), name) or len(value)
    assert n < 253
    name.append(Component.from_bytes(bytes([TypeNumber.SIGNATURE_VALUE, n]) + value[:n]))
    return name


def _issue(kc, key, issuer_id: str, issuer_key, issuer_cert_name):
    """A certificate for ``key`` issued by ``issuer_key`` (KeyLocator: ``issuer_cert_name``),
    valid from an hour ago for a day: (name, wire)."""
    signer = kc.tpm.get_signer(issuer_key.name, issuer_cert_name)
    start = datetime.now(timezone.utc) - timedelta(hours=1)
    return derive_cert(key.name, issuer_id, key.key_bits, signer, start, 86_400)


def _hierarchy(d: str):
    kc = keychain(d)
    root = kc.touch_identity("/ndn").default_key()
    site = kc.touch_identity("/ndn/site").default_key()
    alice = kc.touch_identity("/ndn/site/alice").default_key()
    mallory = kc.touch_identity("/ndn/site/mallory").default_key()
    root_cert = root.default_cert()
    site_cert = _issue(kc, site, "ndn", root, root_cert.name)
    alice_cert = _issue(kc, alice, "site", site, site_cert[0])
    # Mallory's certificate is self-signed: a chain that never reaches the anchor.
    self_signed = mallory.default_cert()
    mallory_cert = (self_signed.name, bytes(self_signed.data))
    return kc, root_cert, site_cert, (alice, alice_cert), (mallory, mallory_cert)


async def _status(app, name) -> int | None:
    try:
        if isinstance(app, NDNApp):
            _n, content, _c = await app.express(name, pass_all, lifetime=8000, must_be_fresh=True)
        else:
            _n, _m, content = await app.express_interest(
                name, validator=_accept_all, lifetime=8000, must_be_fresh=True)
    except Exception:  # noqa: BLE001  (python-ndn's timeout or Nack)
        return None
    return ControlResponse.parse(parse_and_check_tl(memoryview(content), 0x65)).status_code


async def _accept_all(_name, _sig) -> bool:
    return True


def _serve(app, prefix: str, answer):
    """Answers Interests under ``prefix`` with ``answer(name)`` (a Data's wire, or None), in
    either python-ndn API: ``appv2`` echoes the PIT token of the Interest it answers, the older
    ``ndn.app`` does not."""
    if isinstance(app, NDNApp):
        def on_interest(name, _app_param, reply, _context):
            wire = answer(name)
            if wire is not None:
                reply(wire)

        app.attach_handler(prefix, on_interest)
    else:
        def on_interest_v1(name, _param, _app_param):
            wire = answer(name)
            if wire is not None:
                app.put_raw_packet(wire)

        app.set_interest_filter(prefix, on_interest_v1)


@pytest.mark.parametrize("api", ["appv2", "app"])
def test_a_hub_fetches_a_certificate_chain_from_the_face_and_verifies_it(api):
    with tempfile.TemporaryDirectory() as d:
        kc, root_cert, site_cert, (alice, alice_cert), (mallory, mallory_cert) = _hierarchy(d)
        os.makedirs(os.path.join(d, "keys"))
        with open(os.path.join(d, "keys", "root.ndncert"), "w") as f:
            f.write(base64.encodebytes(bytes(root_cert.data)).decode())
        with open(os.path.join(d, "localhop.conf"), "w") as f:
            f.write(POLICY)
        # Relative to the configuration file's directory, as NFD reads it.
        hub_config = '[rib]\nlocalhop_security = "localhop.conf"\n'
        served = []
        certs = {Name.to_str(c[0]): bytes(c[1]) for c in (site_cert, alice_cert, mallory_cert)}
        with _router(d, "hub", hub_config, "127.0.0.1:0", "127.0.0.1:0") as (hub, hub_udp, http):
            host, port = hub_udp.rsplit(":", 1)
            face = UdpFace(host, int(port))
            app = NDNApp(face=face) if api == "appv2" else NDNAppV1(face=face, keychain=kc)

            def on_cert(name):
                asked = Name.to_str(name)
                served.append(asked)
                for cert_name, wire in certs.items():
                    if cert_name.startswith(asked):
                        return wire
                return None

            _serve(app, "/ndn", on_cert)

            async def scenario():
                alice_signer = kc.tpm.get_signer(alice.name, alice_cert[0])
                status = await _status(app, _localhop_command(alice_signer, "/ndn/site/alice/app"))
                assert status == 200, (status, served)
                # The user's certificate, then the site's: each asked for on the app's face.
                assert served == [Name.to_str(alice_cert[0]), Name.to_str(site_cert[0])], served
                assert "prefix=/ndn/site/alice/app " in _routes(hub), _routes(hub)
                # A chain that does not reach the anchor: refused, counted, no route.
                served.clear()
                mallory_signer = kc.tpm.get_signer(mallory.name, mallory_cert[0])
                status = await _status(app, _localhop_command(mallory_signer, "/ndn/site/mallory"))
                assert status == 403, (status, served)
                assert served == [Name.to_str(mallory_cert[0])], served
                assert "mallory" not in _routes(hub)
                assert _refused(http, "bad_certificate") == 1

            async def main():
                task = asyncio.create_task(app.main_loop())
                try:
                    await asyncio.sleep(0.2)
                    await asyncio.wait_for(scenario(), timeout=60)
                finally:
                    app.shutdown()
                    task.cancel()

            asyncio.run(main())
