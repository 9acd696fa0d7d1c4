#!/bin/sh
# Partner API reference client for a POSIX shell: a token, a signed GET /v1/oauth/me and a signed
# POST /v1/customers, with nothing but `openssl` (version 3) and `curl`.
#
# WHAT IT DOES
#   1. POST /v1/oauth/token with your client id and secret (this call is not signed).
#   2. GET /v1/oauth/me, signed (RFC 9421, Ed25519).
#   3. POST /v1/customers with a fixed demo customer, an X-Idempotency-Key and a Content-Digest
#      (RFC 9530, sha-512) of the exact body bytes, signed.
#   It prints each answer: the request line, the status, the headers that matter and the body
#   exactly as received. It exits 0 when every answer was a 2xx, 1 otherwise, 2 on a configuration
#   error.
#
# HOW TO RUN
#   export PARTNER_BASE_URL=http://localhost:8080          # scheme and host only; /v1 is added
#   export PARTNER_CLIENT_ID=org_...                       # your credential's clientId
#   export PARTNER_CLIENT_SECRET=...                       # your credential's clientSecret
#   export PARTNER_PRIVATE_KEY=./partner-key.pem           # a file, or the PEM text itself
#   export PARTNER_KEY_ID=staging-service-ed25519          # the keyid your public key is registered under
#   export PARTNER_IDEMPOTENCY_KEY=$(uuidgen)              # optional
#   sh partner-api-client.sh
#
#   Settings come from environment variables only, so the secret stays out of the process list
#   (the script hands it to curl on stdin, not as an argument).
#   Without PARTNER_IDEMPOTENCY_KEY a new UUID is made and printed: run again with the same key
#   and the server replays the first answer verbatim, with "Idempotent-Replayed: true".
#   OpenSSL 3 is needed: `pkeyutl -rawin` signs Ed25519; LibreSSL (macOS's /usr/bin/openssl) cannot.
#
# THE KEY FILE
#   An Ed25519 private key in PKCS#8 PEM ("-----BEGIN PRIVATE KEY-----"), the format the local
#   sandbox writes in the "privateKey" field of DATA_DIR/sandbox-credentials.json. To use the
#   sandbox's demo credential:
#     jq -r .privateKey data/sandbox-credentials.json > partner-key.pem
#   Any other Ed25519 key OpenSSL reads converts with: openssl pkey -in your-key -out partner-key.pem
#
# THE SIGNATURE BASE (docs/signing.md, served at /docs/signing)
#   One line per covered component, "<name>": <value>, in the order of Signature-Input, then the
#   "@signature-params" line; lines joined by a single LF, no LF at the end. For the POST:
#     "@method": POST
#     "@target-uri": http://localhost:8080/v1/customers
#     "authorization": Bearer <token>
#     "x-client-id": <client id>
#     "content-digest": sha-512=:<base64 of SHA-512(body bytes)>:
#     "x-idempotency-key": <uuid>
#     "@signature-params": ("@method" "@target-uri" "authorization" "x-client-id" "content-digest" "x-idempotency-key");created=<now>;expires=<now+300>;keyid="<key id>"
#   The GET covers only the first four components. The Ed25519 signature of those bytes goes out as
#     Signature-Input: sig1=<the @signature-params value>
#     Signature: sig1=:<base64 signature>:
#   "@target-uri" must be the URL exactly as sent, starting with the server's public base URL.

set -eu

VALIDITY_SECONDS=300 # the server refuses expires - created above 300
CUSTOMER='{"firstName":"Amina","lastName":"Otieno","msisdn":"254712000001"}'

setting() {
  eval "value=\${$1:-}"
  if [ -z "$value" ]; then
    echo "$1 is not set (see the comment at the top of this file)" >&2
    exit 2
  fi
  printf '%s' "$value"
}

BASE_URL=$(setting PARTNER_BASE_URL)
BASE_URL=${BASE_URL%/}
BASE_URL=${BASE_URL%/v1}
CLIENT_ID=$(setting PARTNER_CLIENT_ID)
CLIENT_SECRET=$(setting PARTNER_CLIENT_SECRET)
PRIVATE_KEY=$(setting PARTNER_PRIVATE_KEY)
KEY_ID=$(setting PARTNER_KEY_ID)
case "$(openssl version)" in
  "OpenSSL 3"*) ;;
  *) echo "OpenSSL 3 is required, found: $(openssl version)" >&2; exit 2 ;;
esac

WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
umask 077
case "$PRIVATE_KEY" in
  *-----BEGIN*) printf '%s\n' "$PRIVATE_KEY" > "$WORK/key.pem"; KEY_FILE="$WORK/key.pem" ;;
  *) KEY_FILE=$PRIVATE_KEY ;;
esac
if ! openssl pkey -in "$KEY_FILE" -noout -passin pass: 2>/dev/null; then
  echo "PARTNER_PRIVATE_KEY: cannot read an unencrypted PKCS#8 PEM key from $KEY_FILE" >&2
  exit 2
fi

# A version 4 UUID from 16 random bytes: version nibble 4, variant bits 10.
new_uuid() {
  hex=$(openssl rand -hex 16)
  variant=$(printf '%x' $(( (0x$(printf '%s' "$hex" | cut -c17) & 3) | 8 )))
  printf '%s-%s-4%s-%s%s-%s\n' "$(printf '%s' "$hex" | cut -c1-8)" "$(printf '%s' "$hex" | cut -c9-12)" \
    "$(printf '%s' "$hex" | cut -c14-16)" "$variant" "$(printf '%s' "$hex" | cut -c18-20)" \
    "$(printf '%s' "$hex" | cut -c21-32)"
}
IDEMPOTENCY_KEY=${PARTNER_IDEMPOTENCY_KEY:-$(new_uuid)}

# sign METHOD URL COMPONENT... (the headers' values come from the variables of the same meaning)
# Prints two header lines for curl's --header @file: Signature-Input and Signature.
sign() {
  method=$1 url=$2
  shift 2
  created=$(date +%s)
  params="("
  : > "$WORK/base"
  for name in "$@"; do
    case "$name" in
      @method) value=$method ;;
      @target-uri) value=$url ;;
      authorization) value="Bearer $TOKEN" ;;
      x-client-id) value=$CLIENT_ID ;;
      content-digest) value=$DIGEST ;;
      x-idempotency-key) value=$IDEMPOTENCY_KEY ;;
    esac
    printf '"%s": %s\n' "$name" "$value" >> "$WORK/base"
    params="$params\"$name\" "
  done
  params="${params% });created=$created;expires=$((created + VALIDITY_SECONDS));keyid=\"$KEY_ID\""
  printf '"@signature-params": %s' "$params" >> "$WORK/base" # no LF after the last line
  openssl pkeyutl -sign -inkey "$KEY_FILE" -rawin -in "$WORK/base" -out "$WORK/signature" || exit 2
  signature=$(openssl base64 -A -in "$WORK/signature")
  printf 'Signature-Input: sig1=%s\nSignature: sig1=:%s:\n' "$params" "$signature"
}

# call METHOD PATH HEADER-FILE [BODY-FILE]: sets $status; the answer lands in $WORK/answer-*.
# Headers and body go through files (curl --header @file), so the token never shows in `ps`.
# A server that cannot be reached ends the run: curl has said why on stderr.
call() {
  status=$(curl --silent --show-error --request "$1" --header "@$3" ${4:+--data-binary} ${4:+"@$4"} \
    --dump-header "$WORK/answer-headers" --output "$WORK/answer-body" --write-out '%{http_code}' \
    "$BASE_URL$2") || { echo "cannot reach $BASE_URL$2" >&2; exit 1; }
}

# report REQUEST-LINE STATUS [EXTRA-LINE]: prints the answer; fails for anything but a 2xx.
report() {
  echo "$1"
  if [ -n "${3:-}" ]; then echo "$3"; fi
  echo "HTTP $2"
  tr -d '\r' < "$WORK/answer-headers" | grep -i '^idempotent-replayed:' | sed 's/^[^:]*:[[:space:]]*/Idempotent-Replayed: /' || true
  cat "$WORK/answer-body"
  printf '\n\n'
  case "$2" in 2??) return 0 ;; *) return 1 ;; esac
}

# 1. The token: unsigned. Its body holds the bearer token, so it is not printed.
printf '{"clientId":"%s","clientSecret":"%s"}' "$CLIENT_ID" "$CLIENT_SECRET" > "$WORK/credentials"
printf 'Content-Type: application/json\n' > "$WORK/headers"
call POST /v1/oauth/token "$WORK/headers" "$WORK/credentials"
if [ "$status" != 200 ]; then
  report "POST /v1/oauth/token" "$status" || exit 1
fi
TOKEN=$(sed -n 's/.*"token":"\([^"]*\)".*/\1/p' "$WORK/answer-body")
EXPIRES_IN=$(sed -n 's/.*"expiresIn":\([0-9]*\).*/\1/p' "$WORK/answer-body")
printf 'POST /v1/oauth/token\nHTTP 200 (token received, expires in %s s)\n\n' "$EXPIRES_IN"
DIGEST=

# 2. GET /v1/oauth/me: no body, so no Content-Digest.
{
  printf 'Authorization: Bearer %s\nx-client-id: %s\n' "$TOKEN" "$CLIENT_ID"
  sign GET "$BASE_URL/v1/oauth/me" @method @target-uri authorization x-client-id
} > "$WORK/headers"
ok=0
call GET /v1/oauth/me "$WORK/headers"
report "GET /v1/oauth/me" "$status" || ok=1

# 3. POST /v1/customers: the digest is of the file's exact bytes, which curl sends unchanged.
printf '%s' "$CUSTOMER" > "$WORK/customer"
DIGEST="sha-512=:$(openssl dgst -sha512 -binary "$WORK/customer" | openssl base64 -A):"
{
  printf 'Authorization: Bearer %s\nx-client-id: %s\n' "$TOKEN" "$CLIENT_ID"
  printf 'Content-Type: application/json\nContent-Digest: %s\nX-Idempotency-Key: %s\n' "$DIGEST" "$IDEMPOTENCY_KEY"
  sign POST "$BASE_URL/v1/customers" @method @target-uri authorization x-client-id content-digest x-idempotency-key
} > "$WORK/headers"
call POST /v1/customers "$WORK/headers" "$WORK/customer"
report "POST /v1/customers" "$status" "X-Idempotency-Key: $IDEMPOTENCY_KEY" || ok=1
exit $ok
