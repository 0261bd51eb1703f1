"""A throw-away PKI for emulated switches served over TLS (``inaplanner testbed emulate
--tls-dir``) and the TLS tests: a CA, a server certificate for 127.0.0.1 / localhost /
switch.test, a client certificate for mutual TLS, and a second CA with its own client
certificate that the switches do not trust (the "wrong CA"). Keys are EC P-256, unencrypted PEM
files readable by their owner only; certificates are valid for two days."""

from __future__ import annotations

import datetime
import ipaddress
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID


@dataclass
class PKI:
    """The files :func:`make_pki` wrote."""

    dir: Path
    ca_cert: Path
    server_cert: Path
    server_key: Path
    client_cert: Path
    client_key: Path
    other_ca_cert: Path
    other_client_cert: Path  # signed by the other CA
    other_client_key: Path

    def read(self, name: str) -> bytes:
        return getattr(self, name).read_bytes()

    def server_tls(self, mutual: bool = True):
        """What an emulated switch serves with (client certificates required when ``mutual``)."""
        from inaplanner.emulator.target import ServerTLS

        return ServerTLS(self.read("server_cert"), self.read("server_key"),
                         client_ca=self.read("ca_cert") if mutual else None,
                         require_client_auth=mutual)

    def client_tls(self, mutual: bool = True):
        """What the testbed file tells the deployer and the monitor."""
        from inaplanner.testbed.inventory import TLSSettings

        if mutual:
            return TLSSettings(True, self.ca_cert, self.client_cert, self.client_key)
        return TLSSettings(True, self.ca_cert)


def _key() -> ec.EllipticCurvePrivateKey:
    return ec.generate_private_key(ec.SECP256R1())


def _name(cn: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, cn)])


def _pem_key(key) -> bytes:
    return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                             serialization.NoEncryption())


def _cert(subject: str, key, issuer: str, issuer_key, ca: bool, sans=None, usage=None):
    now = datetime.datetime.now(datetime.UTC)
    b = (x509.CertificateBuilder().subject_name(_name(subject)).issuer_name(_name(issuer))
         .public_key(key.public_key()).serial_number(x509.random_serial_number())
         .not_valid_before(now - datetime.timedelta(minutes=5))
         .not_valid_after(now + datetime.timedelta(days=2))
         .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True))
    if sans:
        b = b.add_extension(x509.SubjectAlternativeName(sans), critical=False)
    if usage:
        b = b.add_extension(x509.ExtendedKeyUsage(usage), critical=False)
    return b.sign(issuer_key, hashes.SHA256())


def make_pki(d: Path) -> PKI:
    """Make the CA, certificates and keys in directory ``d`` (created when missing)."""
    d.mkdir(parents=True, exist_ok=True)
    files: dict[str, Path] = {}

    def write(name: str, data: bytes) -> Path:
        p = d / name
        p.write_bytes(data)
        if name.endswith(".key"):
            p.chmod(0o600)
        files[name] = p
        return p

    ca_key, other_key = _key(), _key()
    ca = _cert("inaplanner test CA", ca_key, "inaplanner test CA", ca_key, True)
    other = _cert("some other CA", other_key, "some other CA", other_key, True)
    skey, ckey, okey = _key(), _key(), _key()
    server = _cert("switch", skey, "inaplanner test CA", ca_key, False,
                   [x509.DNSName("localhost"), x509.DNSName("switch.test"),
                    x509.IPAddress(ipaddress.ip_address("127.0.0.1"))],
                   [ExtendedKeyUsageOID.SERVER_AUTH])
    client = _cert("controller", ckey, "inaplanner test CA", ca_key, False, None,
                   [ExtendedKeyUsageOID.CLIENT_AUTH])
    oclient = _cert("stranger", okey, "some other CA", other_key, False, None,
                    [ExtendedKeyUsageOID.CLIENT_AUTH])
    pem = serialization.Encoding.PEM
    return PKI(
        d,
        write("ca.pem", ca.public_bytes(pem)),
        write("server.pem", server.public_bytes(pem)),
        write("server.key", _pem_key(skey)),
        write("client.pem", client.public_bytes(pem)),
        write("client.key", _pem_key(ckey)),
        write("other_ca.pem", other.public_bytes(pem)),
        write("other_client.pem", oclient.public_bytes(pem)),
        write("other_client.key", _pem_key(okey)),
    )
