"""Cascade signing with a key chain python-ndn made (sqlite PIB, file TPM), found as ndn-cxx
finds one (``NDN_CLIENT_PIB``/``NDN_CLIENT_TPM``).

- ``cascade ctl --sign`` signs commands with an ECDSA identity's default key or an RSA key,
  checked by a router whose ``[[authorize]]`` grants strategy-choice to their certificates
  (python-ndn made the keys; Cascade signs; Cascade's router verifies); a signer the key chain
  lacks is exit status 1, before any command is sent.
- ``cascade poke -S`` signs a Data that python-ndn's known-key checkers verify with the
  certificate python-ndn made (Cascade signs; python-ndn verifies).

``CASCADE_BIN`` names the cascade binary (the suite's runner sets it).
"""

from __future__ import annotations

import asyncio
import base64
import os
import subprocess
import tempfile

from ndn.app import NDNApp
from ndn.encoding import Name
from ndn.security.validator.known_key_validator import EccChecker, RsaChecker

from test_auth import keychain
from test_mgmt_nfd import _run
from test_router import _bin, running_router

MULTICAST = "/localhost/nfd/strategy/multicast"


def _env(d: str) -> dict:
    env = dict(os.environ)
    env["NDN_CLIENT_PIB"] = f"pib-sqlite3:{d}"
    env["NDN_CLIENT_TPM"] = f"tpm-file:{os.path.join(d, 'ndnsec-key-file')}"
    return env


def _make_keys(d: str):
    kc = keychain(d)
    op = kc.touch_identity("/op").default_key()
    kc.touch_identity("/robot")
    rsa = kc.new_key("/robot", "rsa", key_size=2048)
    return op, rsa


def test_ctl_signs_commands_with_the_keychain():
    with tempfile.TemporaryDirectory() as d:
        op, rsa = _make_keys(d)
        certs = []
        for i, key in enumerate([op, rsa]):
            path = os.path.join(d, f"{i}.ndncert")
            with open(path, "w") as f:
                f.write(base64.encodebytes(bytes(key.default_cert().data)).decode())
            certs.append(path)
        config = "".join(
            f'[[authorize]]\ncertfile = "{c}"\nprivileges = ["strategy-choice"]\n' for c in certs
        )
        with running_router(config) as sock:

            def ctl(prefix: str, *sign: str) -> subprocess.CompletedProcess:
                return subprocess.run(
                    [_bin(), "ctl", "--transport", f"unix://{sock}", *sign, "strategy", "set",
                     "prefix", prefix, "strategy", MULTICAST],
                    capture_output=True, text=True, env=_env(d), timeout=20,
                )

            p = ctl("/a", "--sign", "id:/op")
            assert p.returncode == 0, p.stderr
            p = ctl("/b", "--sign", f"key:{Name.to_str(rsa.name)}")
            assert p.returncode == 0, p.stderr
            # DigestSha256: no certificate is that key.
            p = ctl("/c")
            assert p.returncode != 0 and "403" in (p.stdout + p.stderr), p.stderr
            p = ctl("/d", "--sign", "id:/nobody")
            assert p.returncode == 1 and "/nobody" in p.stderr, p.stderr


def _poke(sock: str, d: str, name: str, sign: str) -> subprocess.Popen:
    p = subprocess.Popen(
        [_bin(), "poke", name, "-S", sign, "-w", "10000", "--transport", f"unix://{sock}"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=_env(d),
    )
    p.stdin.write(b"signed by cascade")
    p.stdin.close()
    return p


def test_poke_signs_data_that_python_ndn_verifies():
    with tempfile.TemporaryDirectory() as d:
        op, rsa = _make_keys(d)
        with running_router() as sock:
            cases = [("/p/ec", "id:/op", EccChecker.from_cert(op.default_cert().data)),
                     ("/p/rsa", f"key:{Name.to_str(rsa.name)}", RsaChecker.from_cert(rsa.default_cert().data))]
            pokes = [_poke(sock, d, name, sign) for name, sign, _ in cases]

            async def scenario(app: NDNApp):
                for name, _, checker in cases:
                    for _ in range(100):
                        try:
                            _n, _m, content = await app.express_interest(
                                name, lifetime=1000, must_be_fresh=False, validator=checker
                            )
                            break
                        except Exception as e:  # noqa: BLE001  (not registered yet)
                            if type(e).__name__ == "ValidationFailure":
                                raise
                            await asyncio.sleep(0.05)
                    else:
                        raise AssertionError(f"no Data for {name}")
                    assert bytes(content) == b"signed by cascade"

            _run(sock, scenario)
            for p in pokes:
                assert p.wait(timeout=10) == 0, p.stderr.read()
