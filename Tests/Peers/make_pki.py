#!/usr/bin/env python3
"""Makes a throw-away PKI for Courier's TLS tests in DIR (python3 make_pki.py DIR), with Python's
`cryptography` (an implementation independent of Courier's OpenSSL calls).

Every server file is a PEM chain as the server sends it (leaf first) plus its key, `NAME-chain.pem` and
`NAME.key`. `root.pem` is the CA bundle the tests trust; `pins.json` holds each key's pin, computed here.

  good        leaf for localhost, 127.0.0.1 and ::1, issued by the intermediate, sent with it
  expired     as good, but expired yesterday            notyet     valid only from tomorrow
  wronghost   for other.example.com only                selfsigned a self-signed leaf for localhost
  untrusted   a chain to a root the tests do not trust  incomplete the good leaf without its intermediate
  nonca       a leaf issued by the good leaf (not a CA) clientauth a leaf whose EKU is clientAuth only
  backup      a second good leaf with its own key (for a backup pin)

Client certificates for mutual TLS (EKU clientAuth), under a CA of their own, `client-root.pem`:
  client      "Courier Test Client", sent with its intermediate; also `client-encrypted.key`, its key encrypted
              (PKCS #8) with the password in `client-password.txt`
  client2     a second identity from the same CA ("Courier Test Client Two")
  client-expired  as client, but expired yesterday
  client-otherca  issued by another CA (`client-other-root.pem`), which the servers do not trust
"""
import base64, datetime, hashlib, ipaddress, json, os, sys
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

NOW = datetime.datetime.now(datetime.timezone.utc).replace(microsecond=0)
DAY = datetime.timedelta(days=1)


def key():
    return ec.generate_private_key(ec.SECP256R1())


def name(cn):
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, cn), x509.NameAttribute(NameOID.ORGANIZATION_NAME, "Courier tests")])


def cert(subject_key, cn, issuer_key=None, issuer_cert=None, ca=False, sans=None, start=NOW - DAY, end=NOW + 30 * DAY,
         eku=(ExtendedKeyUsageOID.SERVER_AUTH,)):
    issuer_name = issuer_cert.subject if issuer_cert is not None else name(cn)
    builder = (x509.CertificateBuilder().subject_name(name(cn)).issuer_name(issuer_name)
               .public_key(subject_key.public_key()).serial_number(x509.random_serial_number())
               .not_valid_before(start).not_valid_after(end)
               .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True)
               .add_extension(x509.SubjectKeyIdentifier.from_public_key(subject_key.public_key()), critical=False))
    if ca:
        builder = builder.add_extension(x509.KeyUsage(
            digital_signature=True, content_commitment=False, key_encipherment=False, data_encipherment=False,
            key_agreement=False, key_cert_sign=True, crl_sign=True, encipher_only=False, decipher_only=False), critical=True)
    else:
        builder = builder.add_extension(x509.KeyUsage(
            digital_signature=True, content_commitment=False, key_encipherment=False, data_encipherment=False,
            key_agreement=True, key_cert_sign=False, crl_sign=False, encipher_only=False, decipher_only=False), critical=True)
        builder = builder.add_extension(x509.ExtendedKeyUsage(list(eku)), critical=False)
    if sans:
        entries = []
        for s in sans:
            try:
                entries.append(x509.IPAddress(ipaddress.ip_address(s)))
            except ValueError:
                entries.append(x509.DNSName(s))
        builder = builder.add_extension(x509.SubjectAlternativeName(entries), critical=False)
    return builder.sign(issuer_key or subject_key, hashes.SHA256())


def pem(*certs):
    return b"".join(c.public_bytes(serialization.Encoding.PEM) for c in certs)


def key_pem(k):
    return k.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())


def pin(c):
    spki = c.public_key().public_bytes(serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo)
    return "sha256/" + base64.b64encode(hashlib.sha256(spki).digest()).decode()


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    local = ["localhost", "127.0.0.1", "::1"]
    root_key, other_root_key, inter_key, other_inter_key = key(), key(), key(), key()
    root = cert(root_key, "Courier Test Root", ca=True, start=NOW - 10 * DAY, end=NOW + 3650 * DAY)
    inter = cert(inter_key, "Courier Test Intermediate", root_key, root, ca=True, start=NOW - 10 * DAY, end=NOW + 365 * DAY)
    other_root = cert(other_root_key, "Untrusted Root", ca=True)
    other_inter = cert(other_inter_key, "Untrusted Intermediate", other_root_key, other_root, ca=True)

    servers = {}
    good_key = key()
    good = cert(good_key, "localhost", inter_key, inter, sans=local)
    servers["good"] = (good_key, [good, inter])
    k = key(); servers["expired"] = (k, [cert(k, "localhost", inter_key, inter, sans=local, start=NOW - 30 * DAY, end=NOW - DAY), inter])
    k = key(); servers["notyet"] = (k, [cert(k, "localhost", inter_key, inter, sans=local, start=NOW + DAY, end=NOW + 30 * DAY), inter])
    k = key(); servers["wronghost"] = (k, [cert(k, "other.example.com", inter_key, inter, sans=["other.example.com"]), inter])
    k = key(); servers["selfsigned"] = (k, [cert(k, "localhost", sans=local)])
    k = key(); servers["untrusted"] = (k, [cert(k, "localhost", other_inter_key, other_inter, sans=local), other_inter])
    servers["incomplete"] = (good_key, [good])
    k = key(); servers["nonca"] = (k, [cert(k, "leaf issued by a leaf", good_key, good, sans=local), good, inter])
    k = key(); servers["clientauth"] = (k, [cert(k, "localhost", inter_key, inter, sans=local, eku=(ExtendedKeyUsageOID.CLIENT_AUTH,)), inter])
    k = key(); servers["backup"] = (k, [cert(k, "localhost", inter_key, inter, sans=local), inter])

    client_root_key, client_inter_key, client_other_key = key(), key(), key()
    client_root = cert(client_root_key, "Courier Test Client CA", ca=True, start=NOW - 10 * DAY, end=NOW + 3650 * DAY)
    client_inter = cert(client_inter_key, "Courier Test Client Intermediate", client_root_key, client_root, ca=True,
                        start=NOW - 10 * DAY, end=NOW + 365 * DAY)
    client_other = cert(client_other_key, "Courier Test Other Client CA", ca=True)
    auth = (ExtendedKeyUsageOID.CLIENT_AUTH,)
    client_key = key()
    servers["client"] = (client_key, [cert(client_key, "Courier Test Client", client_inter_key, client_inter, eku=auth), client_inter])
    k = key(); servers["client2"] = (k, [cert(k, "Courier Test Client Two", client_inter_key, client_inter, eku=auth), client_inter])
    k = key(); servers["client-expired"] = (k, [cert(k, "Courier Test Client", client_inter_key, client_inter, eku=auth,
                                                      start=NOW - 30 * DAY, end=NOW - DAY), client_inter])
    k = key(); servers["client-otherca"] = (k, [cert(k, "Courier Test Client", client_other_key, client_other, eku=auth)])
    password = b"correct horse battery staple"
    with open(os.path.join(out, "client-encrypted.key"), "wb") as f:
        f.write(client_key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                         serialization.BestAvailableEncryption(password)))
    with open(os.path.join(out, "client-password.txt"), "wb") as f:
        f.write(password)
    with open(os.path.join(out, "client-root.pem"), "wb") as f:
        f.write(pem(client_root))
    with open(os.path.join(out, "client-other-root.pem"), "wb") as f:
        f.write(pem(client_other))

    with open(os.path.join(out, "root.pem"), "wb") as f:
        f.write(pem(root))
    with open(os.path.join(out, "untrusted-root.pem"), "wb") as f:
        f.write(pem(other_root))
    for label, (k, chain) in servers.items():
        with open(os.path.join(out, label + "-chain.pem"), "wb") as f:
            f.write(pem(*chain))
        with open(os.path.join(out, label + ".key"), "wb") as f:
            f.write(key_pem(k))
    pins = {"root": pin(root), "intermediate": pin(inter), "good": pin(good), "backup": pin(servers["backup"][1][0]),
            "untrusted": pin(servers["untrusted"][1][0])}
    with open(os.path.join(out, "pins.json"), "w") as f:
        json.dump(pins, f)
    print("OK", flush=True)


if __name__ == "__main__":
    main()
