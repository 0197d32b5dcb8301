"""Control commands signed by python-ndn's keychain against ``cascade run`` with ``[[authorize]]``.

A temporary python-ndn keychain (sqlite PIB, file TPM) makes an ECDSA key and its self-signed
certificate for ``/operator``; the certificate is written to a file in base64 as ``ndnsec
cert-dump`` writes it, and the router grants ``strategy-choice`` to it; an RSA key's certificate,
in a binary file, is granted ``strategy-choice`` by a second entry. Commands are signed as
python-ndn's ``make_command`` signs them (the command-Interest form: timestamp, nonce,
SignatureInfo, SignatureValue), with the keychain's signer instead of DigestSha256. NFD's rules:
the granted key passes, another key (named as itself, or claiming the granted one), a
DigestSha256 command and a replay are answered 403; python-ndn's v0.3 signed Interest carries no
SignatureTime, which ndn-cxx's command-Interest policy requires: 403 too. Without
``[[authorize]]`` (NFD's default, ``certfile any``) python-ndn's own commands pass.

``CASCADE_BIN`` names the cascade binary (the suite's runner sets it).
"""

from __future__ import annotations

import asyncio
import base64
import os
import struct
import subprocess
import tempfile

from ndn.app import NDNApp
from ndn.app_support.nfd_mgmt import ControlResponse, make_command, make_command_v2
from ndn.encoding import Component, SignatureInfo, TypeNumber, parse_and_check_tl
from ndn.security import KeychainSqlite3, TpmFile
from ndn.utils import gen_nonce_64, timestamp

from test_mgmt_nfd import _run
from test_router import _bin, running_router

MULTICAST = "/localhost/nfd/strategy/multicast"


def keychain(d: str) -> KeychainSqlite3:
    pib, tpm = os.path.join(d, "pib.db"), os.path.join(d, "ndnsec-key-file")
    assert KeychainSqlite3.initialize(pib, "tpm-file", tpm)
    return KeychainSqlite3(pib, TpmFile(tpm))


def signed_command(signer, module: str, verb: str, **params) -> list:
    """The command Interest's name as ``make_command`` builds it, signed by ``signer``."""
    name = make_command_v2(module, verb, None, **params)
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


async def ask(app: NDNApp, name, **kwargs) -> int | None:
    """The command's StatusCode; ``None`` when nothing answers."""
    try:
        _n, _m, content = await app.express_interest(
            name, lifetime=2000, must_be_fresh=True, **kwargs
        )
    except Exception:  # noqa: BLE001  (python-ndn's timeout)
        return None
    return ControlResponse.parse(parse_and_check_tl(memoryview(content), 0x65)).status_code


def test_commands_signed_by_the_granted_certificate_pass_and_others_do_not():
    with tempfile.TemporaryDirectory() as d:
        kc = keychain(d)
        operator = kc.touch_identity("/operator").default_key()
        other = kc.touch_identity("/other").default_key()
        kc.touch_identity("/robot")
        rsa = kc.new_key("/robot", "rsa", key_size=2048)
        cert = operator.default_cert()
        certfile, rsa_certfile = os.path.join(d, "operator.ndncert"), os.path.join(d, "robot.cert")
        with open(certfile, "w") as f:
            f.write(base64.encodebytes(bytes(cert.data)).decode())
        with open(rsa_certfile, "wb") as f:
            f.write(bytes(rsa.default_cert().data))
        config = (
            f'[[authorize]]\ncertfile = "{certfile}"\n'
            'privileges = ["faces", "fib", "cs", "strategy-choice"]\n'
            f'[[authorize]]\ncertfile = "{rsa_certfile}"\nprivileges = ["strategy-choice"]\n'
        )
        granted = kc.get_signer({"key": operator})
        foreign = kc.get_signer({"key": other})
        # From the TPM: the keychain caches its signers by KeyLocator, and would give back
        # the granted key's.
        forged = kc.tpm.get_signer(other.name, cert.name)

        async def scenario(app: NDNApp):
            def set_strategy(signer, prefix):
                return signed_command(
                    signer, "strategy-choice", "set", name=prefix, strategy=MULTICAST
                )

            accepted = set_strategy(granted, "/a")
            assert await ask(app, accepted) == 200
            assert await ask(app, set_strategy(foreign, "/b")) == 403
            assert await ask(app, set_strategy(forged, "/c")) == 403
            digest = make_command("strategy-choice", "set", name="/d", strategy=MULTICAST)
            assert await ask(app, digest) == 403
            # The same command again, once its answer is no longer fresh: a replay.
            await asyncio.sleep(1.2)
            assert await ask(app, accepted) == 403
            v03 = make_command_v2("strategy-choice", "set", name="/e", strategy=MULTICAST)
            assert await ask(app, v03, app_param=b"", signer=granted) == 403
            # A later command by the granted key still passes, and so does one by the RSA key
            # granted by the second entry (in a binary certificate file).
            assert await ask(app, set_strategy(granted, "/f")) == 200
            assert await ask(app, set_strategy(kc.get_signer({"key": rsa}), "/g")) == 200

        with running_router(config) as sock:
            _run(sock, scenario)


def test_by_default_any_command_passes():
    async def scenario(app: NDNApp):
        digest = make_command("strategy-choice", "set", name="/d", strategy=MULTICAST)
        assert await ask(app, digest) == 200
        unsigned = make_command_v2("strategy-choice", "set", name="/e", strategy=MULTICAST)
        assert await ask(app, unsigned) == 200

    with running_router() as sock:
        _run(sock, scenario)


def test_a_certificate_file_that_cannot_be_loaded_fails_the_config_in_one_line():
    with tempfile.TemporaryDirectory() as d:
        conf = os.path.join(d, "cascade.toml")
        bad = os.path.join(d, "missing.ndncert")
        with open(conf, "w") as f:
            f.write(f'[[authorize]]\ncertfile = "{bad}"\nprivileges = ["fib"]\n')
        p = subprocess.run([_bin(), "run", "-c", conf, "--check"], capture_output=True, text=True)
        assert p.returncode == 2
        lines = p.stderr.strip().splitlines()
        assert len(lines) == 1 and bad in lines[0] and "certfile" in lines[0], p.stderr
