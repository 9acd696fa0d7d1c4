/*
 * Partner API reference client for Java 17+: a token, a signed GET /v1/oauth/me and a signed
 * POST /v1/customers, with the JDK alone (java.net.http for HTTP, java.security for Ed25519).
 *
 * WHAT IT DOES
 *   1. POST /v1/oauth/token with your client id and secret (this call is not signed).
 *   2. GET /v1/oauth/me, signed (RFC 9421, Ed25519).
 *   3. POST /v1/customers with a fixed demo customer, an X-Idempotency-Key and a Content-Digest
 *      (RFC 9530, sha-512) of the exact body bytes, signed.
 *   It prints each answer: the request line, the status, the headers that matter and the body
 *   exactly as received. It exits 0 when every answer was a 2xx, 1 otherwise, 2 on a configuration
 *   error.
 *
 * HOW TO RUN (single-file source launch, no build step, no dependency)
 *   export PARTNER_BASE_URL=http://localhost:8080          # scheme and host only; /v1 is added
 *   export PARTNER_CLIENT_ID=org_...                       # your credential's clientId
 *   export PARTNER_CLIENT_SECRET=...                       # your credential's clientSecret
 *   export PARTNER_PRIVATE_KEY=./partner-key.pem           # a file, or the PEM text itself
 *   export PARTNER_KEY_ID=staging-service-ed25519          # the keyid your public key is registered under
 *   export PARTNER_IDEMPOTENCY_KEY=$(uuidgen)              # optional
 *   java PartnerApiClient.java
 *
 *   Settings come from environment variables only, so the secret stays out of the process list.
 *   Without PARTNER_IDEMPOTENCY_KEY a new UUID is made and printed: run again with the same key
 *   and the server replays the first answer verbatim, with "Idempotent-Replayed: true".
 *
 * THE KEY FILE
 *   An Ed25519 private key in PKCS#8 PEM ("-----BEGIN PRIVATE KEY-----"), the format the local
 *   sandbox writes in the "privateKey" field of DATA_DIR/sandbox-credentials.json. To use the
 *   sandbox's demo credential:
 *     jq -r .privateKey data/sandbox-credentials.json > partner-key.pem
 *   Any other Ed25519 key OpenSSL reads converts with: openssl pkey -in your-key -out partner-key.pem
 *
 * THE SIGNATURE BASE (docs/signing.md, served at /docs/signing)
 *   One line per covered component, "<name>": <value>, in the order of Signature-Input, then the
 *   "@signature-params" line; lines joined by a single LF, no LF at the end. For the POST:
 *     "@method": POST
 *     "@target-uri": http://localhost:8080/v1/customers
 *     "authorization": Bearer <token>
 *     "x-client-id": <client id>
 *     "content-digest": sha-512=:<base64 of SHA-512(body bytes)>:
 *     "x-idempotency-key": <uuid>
 *     "@signature-params": ("@method" "@target-uri" "authorization" "x-client-id" "content-digest" "x-idempotency-key");created=<now>;expires=<now+300>;keyid="<key id>"
 *   The GET covers only the first four components. The Ed25519 signature of those bytes goes out as
 *     Signature-Input: sig1=<the @signature-params value>
 *     Signature: sig1=:<base64 signature>:
 *   "@target-uri" must be the URL exactly as sent, starting with the server's public base URL.
 */

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyFactory;
import java.security.MessageDigest;
import java.security.PrivateKey;
import java.security.Signature;
import java.security.spec.PKCS8EncodedKeySpec;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

public class PartnerApiClient {
    static final long VALIDITY_SECONDS = 300; // the server refuses expires - created above 300
    static final String CUSTOMER = "{\"firstName\":\"Amina\",\"lastName\":\"Otieno\",\"msisdn\":\"254712000001\"}";

    // HTTP/1.1: the default HTTP/2 would first try an h2c upgrade on plain http://.
    static final HttpClient HTTP = HttpClient.newBuilder()
            .version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofSeconds(10))
            .build();

    public static void main(String[] args) throws Exception {
        String baseUrl = setting("PARTNER_BASE_URL").replaceAll("/+$", "").replaceAll("/v1$", "");
        String clientId = setting("PARTNER_CLIENT_ID");
        String clientSecret = setting("PARTNER_CLIENT_SECRET");
        PrivateKey privateKey = loadPrivateKey(setting("PARTNER_PRIVATE_KEY"));
        String keyId = setting("PARTNER_KEY_ID");
        String given = System.getenv("PARTNER_IDEMPOTENCY_KEY");
        String idempotencyKey = given == null || given.isBlank() ? UUID.randomUUID().toString() : given.trim();

        // 1. The token: unsigned. Its body holds the bearer token, so it is not printed.
        String credentials = "{\"clientId\":\"" + clientId + "\",\"clientSecret\":\"" + clientSecret + "\"}";
        HttpResponse<String> tokenAnswer = send("POST", baseUrl + "/v1/oauth/token",
                Map.of("Content-Type", "application/json"), credentials);
        if (tokenAnswer.statusCode() != 200) {
            report("POST /v1/oauth/token", tokenAnswer, List.of());
            System.exit(1);
        }
        String token = jsonString(tokenAnswer.body(), "token");
        System.out.println("POST /v1/oauth/token\nHTTP 200 (token received, expires in "
                + jsonNumber(tokenAnswer.body(), "expiresIn") + " s)\n");

        // 2. GET /v1/oauth/me: no body, so no Content-Digest.
        String url = baseUrl + "/v1/oauth/me";
        Map<String, String> headers = new LinkedHashMap<>();
        headers.put("authorization", "Bearer " + token);
        headers.put("x-client-id", clientId);
        sign("GET", url, headers, List.of("@method", "@target-uri", "authorization", "x-client-id"), keyId, privateKey);
        boolean ok = report("GET /v1/oauth/me", send("GET", url, headers, null), List.of());

        // 3. POST /v1/customers: the digest is of these exact bytes, which are the bytes sent.
        url = baseUrl + "/v1/customers";
        byte[] body = CUSTOMER.getBytes(StandardCharsets.UTF_8);
        headers = new LinkedHashMap<>();
        headers.put("authorization", "Bearer " + token);
        headers.put("x-client-id", clientId);
        headers.put("content-type", "application/json");
        headers.put("content-digest", "sha-512=:"
                + Base64.getEncoder().encodeToString(MessageDigest.getInstance("SHA-512").digest(body)) + ":");
        headers.put("x-idempotency-key", idempotencyKey);
        sign("POST", url, headers, List.of("@method", "@target-uri", "authorization", "x-client-id",
                "content-digest", "x-idempotency-key"), keyId, privateKey);
        ok = report("POST /v1/customers", send("POST", url, headers, CUSTOMER),
                List.of("X-Idempotency-Key: " + idempotencyKey)) && ok;
        System.exit(ok ? 0 : 1);
    }

    static String setting(String name) {
        String value = System.getenv(name);
        if (value == null || value.isBlank()) {
            System.err.println(name + " is not set (see the comment at the top of this file)");
            System.exit(2);
        }
        return value.trim();
    }

    static PrivateKey loadPrivateKey(String value) {
        try {
            String pem = value.contains("-----BEGIN") ? value : Files.readString(Path.of(value), StandardCharsets.US_ASCII);
            if (!pem.contains("-----BEGIN PRIVATE KEY-----")) throw new IllegalArgumentException("no BEGIN PRIVATE KEY");
            String base64 = pem.replaceAll("-----(BEGIN|END) PRIVATE KEY-----", "").replaceAll("\\s", "");
            byte[] der = Base64.getDecoder().decode(base64);
            return KeyFactory.getInstance("Ed25519").generatePrivate(new PKCS8EncodedKeySpec(der));
        } catch (Exception e) {
            System.err.println("PARTNER_PRIVATE_KEY: cannot read an unencrypted PKCS#8 PEM key: " + e);
            System.exit(2);
            return null;
        }
    }

    /** Adds Signature-Input and Signature covering `covered` (lower-case header names or @derived). */
    static void sign(String method, String url, Map<String, String> headers, List<String> covered,
            String keyId, PrivateKey privateKey) throws Exception {
        long created = System.currentTimeMillis() / 1000;
        String params = "(" + String.join(" ", covered.stream().map(name -> "\"" + name + "\"").toList()) + ")"
                + ";created=" + created + ";expires=" + (created + VALIDITY_SECONDS) + ";keyid=\"" + keyId + "\"";
        List<String> lines = new ArrayList<>();
        for (String name : covered) {
            String value = switch (name) {
                case "@method" -> method;
                case "@target-uri" -> url;
                default -> headers.get(name);
            };
            lines.add("\"" + name + "\": " + value);
        }
        lines.add("\"@signature-params\": " + params);
        Signature signer = Signature.getInstance("Ed25519");
        signer.initSign(privateKey);
        signer.update(String.join("\n", lines).getBytes(StandardCharsets.US_ASCII));
        headers.put("signature-input", "sig1=" + params);
        headers.put("signature", "sig1=:" + Base64.getEncoder().encodeToString(signer.sign()) + ":");
    }

    static HttpResponse<String> send(String method, String url, Map<String, String> headers, String body)
            throws IOException, InterruptedException {
        HttpRequest.Builder request = HttpRequest.newBuilder(URI.create(url)).timeout(Duration.ofSeconds(30));
        headers.forEach(request::header);
        request.method(method, body == null
                ? HttpRequest.BodyPublishers.noBody()
                : HttpRequest.BodyPublishers.ofString(body, StandardCharsets.UTF_8));
        try {
            return HTTP.send(request.build(), HttpResponse.BodyHandlers.ofString(StandardCharsets.UTF_8));
        } catch (IOException e) { // no answer at all: refused, unresolvable, timed out
            System.err.println("cannot reach " + url + ": " + e);
            System.exit(1);
            throw e;
        }
    }

    static boolean report(String requestLine, HttpResponse<String> answer, List<String> extra) {
        System.out.println(requestLine);
        extra.forEach(System.out::println);
        System.out.println("HTTP " + answer.statusCode());
        answer.headers().firstValue("idempotent-replayed")
                .ifPresent(value -> System.out.println("Idempotent-Replayed: " + value));
        System.out.println(answer.body());
        System.out.println();
        return answer.statusCode() >= 200 && answer.statusCode() < 300;
    }

    // The JDK has no JSON parser; the token answer's two fields we need are simple enough for a pattern.
    static String jsonString(String json, String field) {
        Matcher m = Pattern.compile("\"" + field + "\"\\s*:\\s*\"([^\"]*)\"").matcher(json);
        if (!m.find()) throw new IllegalStateException("no " + field + " in the token answer");
        return m.group(1);
    }

    static String jsonNumber(String json, String field) {
        Matcher m = Pattern.compile("\"" + field + "\"\\s*:\\s*(\\d+)").matcher(json);
        return m.find() ? m.group(1) : "?";
    }
}
