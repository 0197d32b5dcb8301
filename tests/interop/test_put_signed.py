"""``cascade put -S`` signs every segment and its RDR metadata with a key of a key chain
python-ndn made (sqlite PIB, file TPM, found as ndn-cxx finds one through
``NDN_CLIENT_PIB``/``NDN_CLIENT_TPM``), as ndnputchunks does with ``-S``: python-ndn fetches
the metadata and every segment and verifies each signature with the key's certificate (an
ECDSA identity's default key, and an RSA key named by ``key:``). A checker of another key
rejects them, so the verification can fail.

``CASCADE_BIN`` names the cascade binary (the suite's runner sets it).
"""

from __future__ import annotations

import os
import subprocess
import tempfile

from ndn.encoding import Component, Name
from ndn.security.validator.known_key_validator import EccChecker, RsaChecker

from test_propagate_keychain import _env, _make_keys
from test_router import _bin, running_router
from test_tools import _consume, _wait_route

SEGMENT = 1000


def _put(sock: str, d: str, prefix: str, path: str, sign: str) -> subprocess.Popen:
    return subprocess.Popen(
        [_bin(), "put", prefix, path, "-S", sign, "-s", str(SEGMENT), "--version", "7",
         "--transport", f"unix://{sock}"],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=_env(d),
    )


def test_put_signs_segments_and_metadata_that_python_ndn_verifies():
    with tempfile.TemporaryDirectory() as d:
        op, rsa = _make_keys(d)
        os.makedirs(os.path.join(d, "other"))
        _stranger, other = _make_keys(os.path.join(d, "other"))
        body = os.urandom(3 * SEGMENT + 123)
        path = os.path.join(d, "in.bin")
        with open(path, "wb") as f:
            f.write(body)
        cases = [("/signed/ec", "id:/op", EccChecker.from_cert(op.default_cert().data)),
                 ("/signed/rsa", f"key:{Name.to_str(rsa.name)}",
                  RsaChecker.from_cert(rsa.default_cert().data))]
        wrong = RsaChecker.from_cert(other.default_cert().data)
        with running_router() as sock:
            puts = [_put(sock, d, prefix, path, sign) for prefix, sign, _ in cases]
            try:
                for prefix, _, _ in cases:
                    _wait_route(sock, prefix)

                async def scenario(app):
                    for prefix, _, checker in cases:
                        _n, _m, content = await app.express_interest(
                            Name.normalize(prefix) + [Component.from_str("32=metadata")],
                            must_be_fresh=True, can_be_prefix=True, lifetime=2000,
                            validator=checker,
                        )
                        versioned = Name.from_bytes(bytes(content))
                        assert Name.to_str(versioned) == f"{prefix}/v=7"
                        got = b""
                        for seg in range(4):
                            _n, _m, data = await app.express_interest(
                                versioned + [Component.from_segment(seg)], lifetime=2000,
                                validator=checker,
                            )
                            got += bytes(data)
                        assert got == body
                    # Another key's certificate does not verify them.
                    try:
                        await app.express_interest(
                            Name.normalize("/signed/rsa/v=7") + [Component.from_segment(1)],
                            lifetime=2000, validator=wrong,
                        )
                    except Exception as e:  # noqa: BLE001
                        assert type(e).__name__ == "ValidationFailure", e
                    else:
                        raise AssertionError("a segment verified with another key")

                _consume(sock, scenario)
            finally:
                for p in puts:
                    p.terminate()
                    p.wait(timeout=10)
