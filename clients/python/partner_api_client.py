#!/usr/bin/env python3
"""Partner API reference client for Python 3: a token, a signed GET /v1/oauth/me and a signed
POST /v1/customers, with nothing but the standard library and the `cryptography` package.

WHAT IT DOES
  1. POST /v1/oauth/token with your client id and secret (this call is not signed).
  2. GET /v1/oauth/me, signed (RFC 9421, Ed25519).
  3. POST /v1/customers with a fixed demo customer, an X-Idempotency-Key and a Content-Digest
     (RFC 9530, sha-512) of the exact body bytes, signed.
  It prints each answer: the request line, the status, the headers that matter and the body exactly
  as received. It exits 0 when every answer was a 2xx, 1 otherwise, 2 on a configuration error.

HOW TO RUN
  pip install cryptography        # or, on Debian/Ubuntu: apt-get install python3-cryptography
  export PARTNER_BASE_URL=http://localhost:8080          # scheme and host only; /v1 is added
  export PARTNER_CLIENT_ID=org_...                       # your credential's clientId
  export PARTNER_CLIENT_SECRET=...                       # your credential's clientSecret
  export PARTNER_PRIVATE_KEY=./partner-key.pem           # a file, or the PEM text itself
  export PARTNER_KEY_ID=staging-service-ed25519          # the keyid your public key is registered under
  export PARTNER_IDEMPOTENCY_KEY=$(python3 -c 'import uuid; print(uuid.uuid4())')   # optional
  python3 partner_api_client.py

  Settings come from environment variables only, so the secret stays out of the process list.
  Without PARTNER_IDEMPOTENCY_KEY a new UUID is made and printed: run again with the same key and
  the server replays the first answer verbatim, with "Idempotent-Replayed: true".

THE KEY FILE
  An Ed25519 private key in PKCS#8 PEM ("-----BEGIN PRIVATE KEY-----"), the format the local
  sandbox writes in the "privateKey" field of DATA_DIR/sandbox-credentials.json. To use the
  sandbox's demo credential:
    python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["privateKey"], end="")' \
      data/sandbox-credentials.json > partner-key.pem
  Any other Ed25519 key OpenSSL reads converts with: openssl pkey -in your-key -out partner-key.pem

THE SIGNATURE BASE (docs/signing.md, served at /docs/signing)
  One line per covered component, "<name>": <value>, in the order of Signature-Input, then the
  "@signature-params" line; lines joined by a single LF, no LF at the end. For the POST:
    "@method": POST
    "@target-uri": http://localhost:8080/v1/customers
    "authorization": Bearer <token>
    "x-client-id": <client id>
    "content-digest": sha-512=:<base64 of SHA-512(body bytes)>:
    "x-idempotency-key": <uuid>
    "@signature-params": ("@method" "@target-uri" "authorization" "x-client-id" "content-digest" "x-idempotency-key");created=<now>;expires=<now+300>;keyid="<key id>"
  The GET covers only the first four components. The Ed25519 signature of those bytes goes out as
    Signature-Input: sig1=<the @signature-params value>
    Signature: sig1=:<base64 signature>:
  "@target-uri" must be the URL exactly as sent, starting with the server's public base URL.
"""

import base64
import hashlib
import json
import os
import sys
import time
import urllib.error
import urllib.request
import uuid

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives.serialization import load_pem_private_key

VALIDITY_SECONDS = 300  # the server refuses expires - created above 300
CUSTOMER = {"firstName": "Amina", "lastName": "Otieno", "msisdn": "254712000001"}


def fail(message):
    print(message, file=sys.stderr)
    sys.exit(2)


def setting(name):
    value = os.environ.get(name, "").strip()
    if not value:
        fail(f"{name} is not set (see the comment at the top of this file)")
    return value


def load_private_key(value):
    try:
        pem = value if "-----BEGIN" in value else open(value, "rb").read().decode("ascii")
        key = load_pem_private_key(pem.encode("ascii"), password=None)
    except (OSError, ValueError, TypeError) as error:
        fail(f"PARTNER_PRIVATE_KEY: cannot read an unencrypted PKCS#8 PEM key: {error}")
    if not isinstance(key, Ed25519PrivateKey):
        fail("PARTNER_PRIVATE_KEY is not an Ed25519 private key")
    return key


def content_digest(body):
    return "sha-512=:" + base64.b64encode(hashlib.sha512(body).digest()).decode("ascii") + ":"


def sign(method, url, headers, covered, key_id, private_key):
    """Adds Signature-Input and Signature covering `covered` (lower-case header names or @derived)."""
    created = int(time.time())
    params = "(" + " ".join(f'"{name}"' for name in covered) + ")"
    params += f';created={created};expires={created + VALIDITY_SECONDS};keyid="{key_id}"'
    lower = {name.lower(): value for name, value in headers.items()}
    lines = []
    for name in covered:
        value = {"@method": method, "@target-uri": url}.get(name, lower.get(name))
        lines.append(f'"{name}": {value}')
    lines.append(f'"@signature-params": {params}')
    signature = private_key.sign("\n".join(lines).encode("ascii"))
    headers["Signature-Input"] = f"sig1={params}"
    headers["Signature"] = "sig1=:" + base64.b64encode(signature).decode("ascii") + ":"


def send(method, url, headers, body=None):
    request = urllib.request.Request(url, data=body, method=method, headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, response.headers, response.read()
    except urllib.error.HTTPError as error:  # a 4xx or 5xx still has an answer worth printing
        return error.code, error.headers, error.read()
    except OSError as error:  # no answer at all: refused, unresolvable, timed out
        print(f"cannot reach {url}: {getattr(error, 'reason', error)}", file=sys.stderr)
        sys.exit(1)


def report(method, path, status, headers, body, extra=()):
    print(f"{method} {path}")
    for line in extra:
        print(line)
    print(f"HTTP {status}")
    replayed = headers.get("Idempotent-Replayed")
    if replayed is not None:
        print(f"Idempotent-Replayed: {replayed}")
    print(body.decode("utf-8"))
    print()
    return 200 <= status < 300


def main():
    base_url = setting("PARTNER_BASE_URL").rstrip("/")
    if base_url.endswith("/v1"):
        base_url = base_url[: -len("/v1")]
    client_id = setting("PARTNER_CLIENT_ID")
    client_secret = setting("PARTNER_CLIENT_SECRET")
    private_key = load_private_key(setting("PARTNER_PRIVATE_KEY"))
    key_id = setting("PARTNER_KEY_ID")
    idempotency_key = os.environ.get("PARTNER_IDEMPOTENCY_KEY", "").strip() or str(uuid.uuid4())

    # 1. The token: unsigned. Its body holds the bearer token, so it is not printed.
    credentials = json.dumps({"clientId": client_id, "clientSecret": client_secret}).encode("utf-8")
    status, headers, body = send(
        "POST", f"{base_url}/v1/oauth/token", {"Content-Type": "application/json"}, credentials
    )
    if status != 200:
        report("POST", "/v1/oauth/token", status, headers, body)
        return 1
    answer = json.loads(body)
    print(f"POST /v1/oauth/token\nHTTP 200 (token received, expires in {answer['expiresIn']} s)\n")
    auth = {"Authorization": f"Bearer {answer['token']}", "x-client-id": client_id}

    # 2. GET /v1/oauth/me: no body, so no Content-Digest.
    url = f"{base_url}/v1/oauth/me"
    headers = dict(auth)
    sign("GET", url, headers, ["@method", "@target-uri", "authorization", "x-client-id"], key_id, private_key)
    ok = report("GET", "/v1/oauth/me", *send("GET", url, headers))

    # 3. POST /v1/customers: the digest is of these exact bytes, which are the bytes sent.
    url = f"{base_url}/v1/customers"
    body = json.dumps(CUSTOMER, separators=(",", ":")).encode("utf-8")
    headers = dict(auth)
    headers["Content-Type"] = "application/json"
    headers["Content-Digest"] = content_digest(body)
    headers["X-Idempotency-Key"] = idempotency_key
    covered = ["@method", "@target-uri", "authorization", "x-client-id", "content-digest", "x-idempotency-key"]
    sign("POST", url, headers, covered, key_id, private_key)
    status, answer_headers, answer_body = send("POST", url, headers, body)
    extra = [f"X-Idempotency-Key: {idempotency_key}"]
    ok = report("POST", "/v1/customers", status, answer_headers, answer_body, extra) and ok
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
