#!/usr/bin/env python3
"""APNs and FCM HTTP v1 provider emulator for Parley's push tests and benchmarks.

Speaks HTTP/2 for real (the `h2` library) on 127.0.0.1: over TLS with ALPN `h2` and a
fresh self-signed certificate (`--tls-cert-out FILE`, how the tests run it, like the real
providers), or in the clear with prior knowledge (h2c). libcurl 7.88 (Debian 12) fails
to reuse an h2c connection ("Error in the HTTP2 framing layer", curl issue 10634, fixed
in 7.89), so clients that send more than one request should use TLS. It checks what the
real providers check, and answers with their documented
status codes and JSON error bodies:

- APNs: POST /3/device/<hex token>. Checks `authorization: bearer <JWT>` (ES256, `kid`
  and `iss` as configured, signature with the configured public key, `iat` within the
  last hour), `apns-push-type`, `apns-topic`, `apns-priority`, `apns-expiration`, a JSON
  body of at most 5120 bytes. 200 with `apns-id`; errors `{"reason": ...}` (400
  BadDeviceToken / MissingTopic / BadPriority / BadExpirationDate / PayloadEmpty, 403
  MissingProviderToken / InvalidProviderToken / ExpiredProviderToken, 410 Unregistered
  with a timestamp, 413 PayloadTooLarge, 429 TooManyRequests, 503 ServiceUnavailable).
- OAuth token endpoint: POST /token, form `grant_type=urn:ietf:params:oauth:grant-type:jwt-bearer`
  and `assertion=<JWT>` (RS256, `iss` the client e-mail, `aud` the token URI, the FCM
  scope, `exp - iat` at most 3600). 200 `{"access_token","expires_in","token_type"}`,
  else 400 `{"error":"invalid_grant","error_description":...}`.
- FCM: POST /v1/projects/<project>/messages:send with `authorization: Bearer <access
  token from /token>`. 200 `{"name":"projects/<p>/messages/<id>"}`; errors in Google's
  shape `{"error":{"code","message","status","details":[{"@type":...FcmError,"errorCode"}]}}`
  (400 INVALID_ARGUMENT, 401 UNAUTHENTICATED, 404 UNREGISTERED, 429 QUOTA_EXCEEDED,
  503 UNAVAILABLE).

APNs has two environments, as Apple does: `/3/device/...` is production and
`/sandbox/3/device/...` the sandbox (development builds), so a client whose sandbox base
URL is `<base>/sandbox` talks to two "hosts". POST /control/apns-tokens
`{"production": [tokens], "sandbox": [tokens]}` says which tokens each environment knows;
once set, a token an environment does not know gets 400 BadDeviceToken there, which is
what Apple answers for a token sent to the wrong environment. Without it every
well-formed token is accepted in both.

Control (same port, HTTP/2): POST /control/script with a JSON object
`{"apns": [410, 503], "fcm": [503]}` appends answers that the next requests of that
provider get instead of their normal answer (after the checks pass). An entry is a status
or an object `{"status": 429, "reason": "TooManyRequests", "retryAfter": "1"}`: `reason`
replaces the APNs reason (e.g. 410 "ExpiredToken"), `retryAfter` is sent verbatim as the
`retry-after` header (delta-seconds or an HTTP date). POST /control/reset clears the
script, the token lists and the log; POST /control/token-uri `{"tokenUri": ...}` sets the
token URI the assertions' `aud` must equal (it holds the port, known once listening);
POST /control/requests returns every provider request
seen, with its headers, body, the verified JWT claims and (APNs) the environment.

Usage: emulator.py --config FILE [--port N] [--tls-cert-out FILE]; prints `listening <port>` on stdout once
ready. The config is JSON: {"apns": {"teamId", "keyId", "publicKeyPem"}, "fcm":
{"clientEmail", "publicKeyPem", "tokenUri", "projectId"}} (either may be missing).
"""
import argparse
import asyncio
import base64
import json
import secrets
import signal
import sys
import time
import urllib.parse
import uuid

import h2.config
import h2.connection
import h2.events
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, padding
from cryptography.hazmat.primitives.asymmetric.utils import encode_dss_signature

FCM_SCOPE = "https://www.googleapis.com/auth/firebase.messaging"
MAX_BODY = 64 * 1024


def b64url_decode(text):
    if "=" in text:
        raise ValueError("padding in base64url")
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


class JWTError(Exception):
    pass


def verify_jwt(token, alg, public_key):
    parts = token.split(".")
    if len(parts) != 3:
        raise JWTError("not a compact JWS")
    try:
        header = json.loads(b64url_decode(parts[0]))
        claims = json.loads(b64url_decode(parts[1]))
        signature = b64url_decode(parts[2])
    except Exception as error:  # malformed base64 or JSON
        raise JWTError(f"malformed: {error}")
    if header.get("alg") != alg:
        raise JWTError(f"alg is {header.get('alg')!r}, expected {alg}")
    signed = (parts[0] + "." + parts[1]).encode("ascii")
    try:
        if alg == "ES256":
            if len(signature) != 64:
                raise JWTError("ES256 signature is not 64 bytes (r||s)")
            der = encode_dss_signature(int.from_bytes(signature[:32], "big"), int.from_bytes(signature[32:], "big"))
            public_key.verify(der, signed, ec.ECDSA(hashes.SHA256()))
        else:
            public_key.verify(signature, signed, padding.PKCS1v15(), hashes.SHA256())
    except InvalidSignature:
        raise JWTError("bad signature")
    return header, claims


class Emulator:
    def __init__(self, config):
        self.config = config
        self.script = {"apns": [], "fcm": []}
        self.requests = []
        self.access_tokens = {}
        # Environment -> set of tokens it knows; None: every well-formed token.
        self.apns_tokens = None
        self.apns_key = None
        self.fcm_key = None
        if "apns" in config:
            self.apns_key = serialization.load_pem_public_key(config["apns"]["publicKeyPem"].encode())
        if "fcm" in config:
            self.fcm_key = serialization.load_pem_public_key(config["fcm"]["publicKeyPem"].encode())

    # Each handler returns (status, headers, body bytes).
    def handle(self, method, path, headers, body):
        if path.startswith("/control/"):
            return self.control(method, path, body)
        if method != "POST":
            return 405, [], b""
        if path.startswith("/3/device/"):
            return self.apns(path, headers, body, "production")
        if path.startswith("/sandbox/3/device/"):
            return self.apns(path[len("/sandbox"):], headers, body, "sandbox")
        if path == "/token":
            return self.token(headers, body)
        if path.startswith("/v1/projects/") and path.endswith("/messages:send"):
            return self.fcm(path, headers, body)
        return 404, [("content-type", "application/json")], b'{"reason":"BadPath"}'

    def control(self, method, path, body):
        if path == "/control/script" and method == "POST":
            script = json.loads(body or b"{}")
            for provider in ("apns", "fcm"):
                for entry in script.get(provider, []):
                    if isinstance(entry, dict):
                        self.script[provider].append({"status": int(entry["status"]), "reason": entry.get("reason"),
                                                      "retryAfter": entry.get("retryAfter")})
                    else:
                        self.script[provider].append({"status": int(entry), "reason": None, "retryAfter": None})
            return 200, [("content-type", "application/json")], b"{}"
        if path == "/control/apns-tokens" and method == "POST":
            lists = json.loads(body or b"{}")
            self.apns_tokens = {env: set(lists.get(env, [])) for env in ("production", "sandbox")}
            return 200, [("content-type", "application/json")], b"{}"
        if path == "/control/token-uri" and method == "POST" and "fcm" in self.config:
            # The token URI (the assertion's `aud`) contains the port, known only once listening.
            self.config["fcm"]["tokenUri"] = json.loads(body)["tokenUri"]
            return 200, [("content-type", "application/json")], b"{}"
        if path == "/control/reset" and method == "POST":
            self.script = {"apns": [], "fcm": []}
            self.requests = []
            self.apns_tokens = None
            return 200, [("content-type", "application/json")], b"{}"
        if path == "/control/requests":
            return 200, [("content-type", "application/json")], json.dumps(self.requests).encode()
        return 404, [], b""

    def record(self, provider, path, headers, body, claims, status, reason, environment=None):
        entry = {
            "provider": provider, "path": path, "headers": headers,
            "body": body.decode("utf-8", "replace"), "jwtClaims": claims, "status": status, "reason": reason,
        }
        if environment:
            entry["environment"] = environment
        self.requests.append(entry)

    def apns(self, path, headers, body, environment):
        def answer(status, reason, claims=None, extra=None):
            self.record("apns", path, headers, body, claims, status, reason, environment)
            if status == 200:
                return 200, [("apns-id", str(uuid.uuid4()).upper())], b""
            payload = {"reason": reason}
            if status == 410:
                payload["timestamp"] = int(time.time() * 1000)
            return status, [("content-type", "application/json"), ("apns-id", str(uuid.uuid4()).upper())] + (extra or []), json.dumps(payload).encode()

        token = path[len("/3/device/"):]
        if not token or len(token) % 2 or any(c not in "0123456789abcdefABCDEF" for c in token) or len(token) > 200:
            return answer(400, "BadDeviceToken")
        auth = headers.get("authorization", "")
        if not auth.startswith("bearer "):
            return answer(403, "MissingProviderToken")
        if self.apns_key is None:
            return answer(403, "InvalidProviderToken")
        try:
            header, claims = verify_jwt(auth[len("bearer "):], "ES256", self.apns_key)
        except JWTError:
            return answer(403, "InvalidProviderToken")
        if header.get("kid") != self.config["apns"]["keyId"] or claims.get("iss") != self.config["apns"]["teamId"]:
            return answer(403, "InvalidProviderToken")
        iat = claims.get("iat")
        if not isinstance(iat, int) or iat > time.time() + 60:
            return answer(403, "InvalidProviderToken", claims)
        if time.time() - iat > 3600:
            return answer(403, "ExpiredProviderToken", claims)
        topic = headers.get("apns-topic")
        if not topic:
            return answer(400, "MissingTopic", claims)
        push_type = headers.get("apns-push-type")
        if push_type not in ("alert", "background", "voip", "complication", "fileprovider", "mdm", "location", "liveactivity"):
            return answer(400, "InvalidPushType", claims)
        if push_type == "voip" and not topic.endswith(".voip"):
            return answer(400, "DeviceTokenNotForTopic", claims)
        if headers.get("apns-priority", "10") not in ("1", "5", "10"):
            return answer(400, "BadPriority", claims)
        if not headers.get("apns-expiration", "0").isdigit():
            return answer(400, "BadExpirationDate", claims)
        if not body:
            return answer(400, "PayloadEmpty", claims)
        if len(body) > 5120:
            return answer(413, "PayloadTooLarge", claims)
        if self.script["apns"]:
            entry = self.script["apns"].pop(0)
            status = entry["status"]
            reason = entry["reason"] or {410: "Unregistered", 429: "TooManyRequests", 500: "InternalServerError",
                                         503: "ServiceUnavailable", 400: "BadDeviceToken",
                                         403: "ExpiredProviderToken"}.get(status, "ScriptedAnswer")
            extra = [("retry-after", str(entry["retryAfter"]))] if entry["retryAfter"] is not None else []
            if status != 200:
                return answer(status, reason, claims, extra)
        if self.apns_tokens is not None and token not in self.apns_tokens[environment]:
            return answer(400, "BadDeviceToken", claims)
        return answer(200, None, claims)

    def token(self, headers, body):
        def refuse(description, claims=None):
            self.record("oauth", "/token", headers, body, claims, 400, "invalid_grant")
            return 400, [("content-type", "application/json")], json.dumps(
                {"error": "invalid_grant", "error_description": description}).encode()

        form = urllib.parse.parse_qs(body.decode("ascii", "replace"))
        if form.get("grant_type") != ["urn:ietf:params:oauth:grant-type:jwt-bearer"]:
            return refuse("Invalid grant_type.")
        if self.fcm_key is None or len(form.get("assertion", [])) != 1:
            return refuse("Invalid JWT.")
        try:
            header, claims = verify_jwt(form["assertion"][0], "RS256", self.fcm_key)
        except JWTError as error:
            return refuse(f"Invalid JWT Signature: {error}")
        fcm = self.config["fcm"]
        now = time.time()
        if claims.get("iss") != fcm["clientEmail"] or claims.get("aud") != fcm["tokenUri"]:
            return refuse("Invalid JWT: iss or aud.", claims)
        if claims.get("scope") != FCM_SCOPE:
            return refuse("Invalid OAuth scope.", claims)
        iat, exp = claims.get("iat"), claims.get("exp")
        if not isinstance(iat, int) or not isinstance(exp, int) or exp - iat > 3600 or exp < now or iat > now + 60:
            return refuse("Invalid JWT: Token must be a short-lived token (60 minutes) and in a reasonable timeframe.", claims)
        access = "ya29." + secrets.token_urlsafe(32)
        self.access_tokens[access] = now + 3599
        self.record("oauth", "/token", headers, body, claims, 200, None)
        return 200, [("content-type", "application/json")], json.dumps(
            {"access_token": access, "expires_in": 3599, "token_type": "Bearer"}).encode()

    def fcm(self, path, headers, body):
        def error(status, code, message, fcm_code=None, claims=None, retry_after=None):
            self.record("fcm", path, headers, body, claims, status, fcm_code or code)
            details = [{"@type": "type.googleapis.com/google.firebase.fcm.v1.FcmError", "errorCode": fcm_code}] if fcm_code else []
            payload = {"error": {"code": status, "message": message, "status": code}}
            if details:
                payload["error"]["details"] = details
            extra = [("retry-after", str(retry_after))] if retry_after is not None else []
            return status, [("content-type", "application/json; charset=UTF-8")] + extra, json.dumps(payload).encode()

        project = path[len("/v1/projects/"):-len("/messages:send")]
        auth = headers.get("authorization", "")
        access = auth[len("Bearer "):] if auth.startswith("Bearer ") else None
        if access is None or self.access_tokens.get(access, 0) < time.time():
            return error(401, "UNAUTHENTICATED", "Request had invalid authentication credentials.", "THIRD_PARTY_AUTH_ERROR")
        if project != self.config["fcm"].get("projectId"):
            return error(403, "PERMISSION_DENIED", "Permission denied on the project.", "SENDER_ID_MISMATCH")
        try:
            message = json.loads(body)["message"]
            token = message["token"]
            data = message.get("data", {})
            assert isinstance(token, str) and token
            assert all(isinstance(k, str) and isinstance(v, str) for k, v in data.items())
            assert message.get("android", {}).get("priority", "NORMAL") in ("NORMAL", "HIGH")
        except (ValueError, KeyError, TypeError, AssertionError):
            return error(400, "INVALID_ARGUMENT", "Request contains an invalid argument.", "INVALID_ARGUMENT")
        if len(body) > 4096 + 1024:
            return error(400, "INVALID_ARGUMENT", "Message is too big.", "INVALID_ARGUMENT")
        if self.script["fcm"]:
            entry = self.script["fcm"].pop(0)
            status, retry_after = entry["status"], entry["retryAfter"]
            if status == 404:
                return error(404, "NOT_FOUND", "Requested entity was not found.", "UNREGISTERED")
            if status == 429:
                return error(429, "RESOURCE_EXHAUSTED", "Quota exceeded.", "QUOTA_EXCEEDED", retry_after=retry_after)
            if status == 503:
                return error(503, "UNAVAILABLE", "The service is currently unavailable.", "UNAVAILABLE", retry_after=retry_after)
            if status >= 500:
                return error(status, "INTERNAL", "Internal error.", "INTERNAL", retry_after=retry_after)
            if status != 200:
                return error(status, "INVALID_ARGUMENT", "Scripted refusal.", "INVALID_ARGUMENT")
        self.record("fcm", path, headers, body, None, 200, None)
        return 200, [("content-type", "application/json; charset=UTF-8")], json.dumps(
            {"name": f"projects/{project}/messages/0:{secrets.randbelow(10**16)}"}).encode()


async def serve_connection(emulator, reader, writer):
    connection = h2.connection.H2Connection(config=h2.config.H2Configuration(client_side=False, header_encoding="utf-8"))
    connection.initiate_connection()
    writer.write(connection.data_to_send())
    streams = {}
    try:
        while True:
            data = await reader.read(65536)
            if not data:
                break
            try:
                events = connection.receive_data(data)
            except Exception as error:  # a protocol violation by the client: drop the connection
                print(f"emulator: connection dropped: {error!r}", file=sys.stderr, flush=True)
                break
            for event in events:
                if isinstance(event, h2.events.RequestReceived):
                    streams[event.stream_id] = [dict(event.headers), bytearray()]
                elif isinstance(event, h2.events.DataReceived):
                    connection.acknowledge_received_data(event.flow_controlled_length, event.stream_id)
                    if event.stream_id in streams and len(streams[event.stream_id][1]) < MAX_BODY:
                        streams[event.stream_id][1] += event.data
                elif isinstance(event, h2.events.StreamEnded) and event.stream_id in streams:
                    headers, body = streams.pop(event.stream_id)
                    method, path = headers.get(":method", ""), headers.get(":path", "")
                    plain = {k: v for k, v in headers.items() if not k.startswith(":")}
                    try:
                        status, extra, payload = emulator.handle(method, path, plain, bytes(body))
                    except Exception as error:  # a bug here must not kill the connection silently
                        print(f"emulator error: {error!r}", file=sys.stderr, flush=True)
                        status, extra, payload = 500, [], b'{"reason":"InternalServerError"}'
                    response = [(":status", str(status)), ("content-length", str(len(payload)))] + extra
                    connection.send_headers(event.stream_id, response, end_stream=not payload)
                    if payload:
                        connection.send_data(event.stream_id, payload, end_stream=True)
                elif isinstance(event, h2.events.ConnectionTerminated):
                    break
            writer.write(connection.data_to_send())
            await writer.drain()
    finally:
        writer.close()


def tls_context(cert_out):
    """A TLS context offering only h2 (as APNs and FCM do), with a fresh self-signed
    certificate for 127.0.0.1 written to `cert_out` for the client to trust."""
    import datetime
    import ipaddress
    import os
    import ssl
    import tempfile
    from cryptography import x509
    from cryptography.x509.oid import NameOID
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "parley push emulator")])
    now = datetime.datetime.now(datetime.timezone.utc)
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
            .serial_number(x509.random_serial_number()).not_valid_before(now - datetime.timedelta(days=1))
            .not_valid_after(now + datetime.timedelta(days=2))
            .add_extension(x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), critical=False)
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
            .sign(key, hashes.SHA256()))
    cert_pem = cert.public_bytes(serialization.Encoding.PEM)
    with open(cert_out, "wb") as handle:
        handle.write(cert_pem)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    context.set_alpn_protocols(["h2"])
    with tempfile.NamedTemporaryFile("wb", delete=False) as handle:
        handle.write(cert_pem + key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                                  serialization.NoEncryption()))
        combined = handle.name
    try:
        context.load_cert_chain(combined)
    finally:
        os.unlink(combined)
    return context


async def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--config", required=True)
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--tls-cert-out", help="serve HTTP/2 over TLS (ALPN h2) with a fresh self-signed "
                        "certificate for 127.0.0.1, written to this file; without it, cleartext h2c")
    args = parser.parse_args()
    with open(args.config) as handle:
        emulator = Emulator(json.load(handle))
    context = tls_context(args.tls_cert_out) if args.tls_cert_out else None
    server = await asyncio.start_server(lambda r, w: serve_connection(emulator, r, w), "127.0.0.1", args.port, ssl=context)
    # A parent may spawn us with SIGTERM blocked (inherited signal mask): unblock it.
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM, signal.SIGINT})
    stop = asyncio.Event()
    for signum in (signal.SIGTERM, signal.SIGINT):
        asyncio.get_running_loop().add_signal_handler(signum, stop.set)
    print(f"listening {server.sockets[0].getsockname()[1]}", flush=True)
    async with server:
        await stop.wait()


if __name__ == "__main__":
    try:
        asyncio.run(main())
    except KeyboardInterrupt:
        pass
