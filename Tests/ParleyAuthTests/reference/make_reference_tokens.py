#!/usr/bin/env python3
"""Reference implementation of the user token format, independent of the Swift code.

Mints tokens the way an application backend would (Python standard library only:
hmac, hashlib, base64, json), plus one altered variant per refusal reason, and writes
them as Swift fixtures to ../ReferenceTokens.swift:

    python3 Tests/ParleyAuthTests/reference/make_reference_tokens.py

Every fixture names the AuthError kind the Swift verifier must give (or "accepted").
All are verified at NOW with the application KEY and SECRET below.
"""
import base64
import hashlib
import hmac
import json
import os

KEY = "3f6c1f2e-8d3a-4b7e-9c1d-5a2b7e9f0c41"
OTHER_KEY = "9a0b1c2d-3e4f-4a5b-8c6d-7e8f9a0b1c2d"
SECRET = base64.b64encode(bytes(range(1, 33))).decode()          # 32 bytes, as parleyd makes
SINCH_SECRET = base64.b64encode(bytes(range(100, 116))).decode()  # 16 bytes, as Sinch makes
IAT = 1764421200          # 2025-11-29T13:00:00Z
NOW = IAT + 30
PARLEY = "//parley/applications/"
SINCH = "//rtc.sinch.com/applications/"


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def key_for(secret_b64: str, date: str) -> bytes:
    return hmac.new(base64.b64decode(secret_b64), date.encode(), hashlib.sha256).digest()


def sign(header: bytes, payload: bytes, key: bytes) -> str:
    signing_input = b64url(header) + "." + b64url(payload)
    return signing_input + "." + b64url(hmac.new(key, signing_input.encode(), hashlib.sha256).digest())


def compact(obj) -> bytes:
    return json.dumps(obj, separators=(",", ":")).encode()


def claims(**overrides):
    prefix = overrides.pop("prefix", PARLEY)
    app = overrides.pop("app", KEY)
    user = overrides.pop("user", "alice")
    c = {"iss": prefix + app, "sub": prefix + app + "/users/" + user,
         "iat": IAT, "exp": IAT + 600, "nonce": "q3Zt8yW1"}
    for name, value in overrides.items():
        if value is None:
            c.pop(name, None)
        else:
            c[name] = value
    return c


HEADER = {"alg": "HS256", "kid": "hkdfv1-20251129", "typ": "JWT"}


def token(header=None, payload=None, secret=SECRET, date="20251129", raw_header=None, raw_payload=None):
    h = raw_header if raw_header is not None else compact(header if header is not None else HEADER)
    p = raw_payload if raw_payload is not None else compact(payload if payload is not None else claims())
    return sign(h, p, key_for(secret, date))


fixtures = []


def add(name, tok, expected, secret="SECRET"):
    fixtures.append((name, tok, expected, secret))


add("parley issuer", token(), "accepted")
add("sinch issuer", token(payload=claims(prefix=SINCH)), "accepted")
add("sinch 16-byte secret", token(secret=SINCH_SECRET, payload=claims(prefix=SINCH)), "accepted", "SINCH_SECRET")
add("no typ, keys reordered, spaces",
    token(raw_header=b'{ "kid" : "hkdfv1-20251129", "alg" : "HS256" }',
          raw_payload=b'{"nonce":"n-2","exp":1764421800,"sub":"//parley/applications/' + KEY.encode()
          + b'/users/bob_2=","iat":1764421200,"iss":"//parley/applications/' + KEY.encode() + b'"}'),
    "accepted")
add("extra claims and nbf",
    token(payload=claims(nbf=IAT, custom={"a": [1, 2, {"b": None}]}, flag=True, ratio=0.5, nonce="n\"q\\uote")), "accepted")
add("unicode escapes in an unknown claim", token(raw_payload=compact(claims())[:-1] + b',"x":"\\u00e9\\ud83d\\ude00"}'), "accepted")
add("key date one day before iat", token(header={**HEADER, "kid": "hkdfv1-20251128"}, date="20251128"), "accepted")
add("lifetime exactly 24 h", token(payload=claims(exp=IAT + 86400)), "accepted")
add("255-byte user id", token(payload=claims(user="u" * 255)), "accepted")

add("alg none, empty signature", b64url(compact({**HEADER, "alg": "none"})) + "." + b64url(compact(claims())) + ".", "unsupportedAlgorithm")
add("empty signature", b64url(compact(HEADER)) + "." + b64url(compact(claims())) + ".", "malformed")
add("truncated signature", token()[:-2], "malformed")
add("alg none, with signature", token(header={**HEADER, "alg": "none"}), "unsupportedAlgorithm")
add("alg HS512", token(header={**HEADER, "alg": "HS512"}), "unsupportedAlgorithm")
add("alg RS256", token(header={**HEADER, "alg": "RS256"}), "unsupportedAlgorithm")
add("alg lower case", token(header={**HEADER, "alg": "hs256"}), "unsupportedAlgorithm")
add("alg missing", token(header={"kid": "hkdfv1-20251129"}), "malformed")
add("crit header", token(header={**HEADER, "crit": ["exp"]}), "malformed")
add("typ JWE", token(header={**HEADER, "typ": "JWE"}), "malformed")
add("kid missing", token(header={"alg": "HS256"}), "unknownKey")
add("kid other derivation", token(header={**HEADER, "kid": "hkdfv2-20251129"}), "unknownKey")
add("kid impossible date", token(header={**HEADER, "kid": "hkdfv1-20251131"}, date="20251131"), "unknownKey")
add("kid not a string", token(header={**HEADER, "kid": 20251129}), "malformed")
add("signed with the raw secret", sign(compact(HEADER), compact(claims()), base64.b64decode(SECRET)), "badSignature")
add("signed with another secret", token(secret=SINCH_SECRET), "badSignature")
add("signed with another day's key", token(date="20251128"), "badSignature")
add("payload changed after signing", token().split(".")[0] + "." + b64url(compact(claims(user="mallory"))) + "." + token().split(".")[2], "badSignature")
add("key date two days before iat", token(header={**HEADER, "kid": "hkdfv1-20251127"}, date="20251127"), "keyDateMismatch")
add("iss of another application", token(payload=claims(app=OTHER_KEY)), "wrongApplication")
add("sub of another application", token(payload={**claims(), "sub": PARLEY + OTHER_KEY + "/users/alice"}), "wrongApplication")
add("sub with the other prefix", token(payload={**claims(), "sub": SINCH + KEY + "/users/alice"}), "badUserID")
add("iss unknown form", token(payload={**claims(), "iss": "//example.com/applications/" + KEY}), "malformed")
add("user id with a dot", token(payload=claims(user="alice.smith")), "badUserID")
add("user id empty", token(payload=claims(user="")), "badUserID")
add("256-byte user id", token(payload=claims(user="u" * 256)), "badUserID")
add("expired", token(payload=claims(iat=NOW - 700, exp=NOW - 61)), "expired")
add("iat in the future", token(payload=claims(iat=NOW + 61, exp=NOW + 600)), "notYetValid")
add("nbf in the future", token(payload=claims(nbf=NOW + 120)), "notYetValid")
add("lifetime over 24 h", token(payload=claims(exp=IAT + 86401)), "lifetimeTooLong")
add("exp before iat", token(payload=claims(exp=IAT - 1)), "malformed")
add("iat fractional", token(payload=claims(iat=IAT + 0.5)), "malformed")
add("exp a string", token(payload=claims(exp=str(IAT + 600))), "malformed")
add("nonce missing", token(payload=claims(nonce=None)), "malformed")
add("nonce with a space", token(payload=claims(nonce="a b")), "malformed")
add("aud present", token(payload=claims(aud="someone")), "malformed")
add("duplicate claim", token(raw_payload=compact(claims())[:-1] + b',"sub":"' + (PARLEY + KEY + "/users/mallory").encode() + b'"}'), "malformed")
add("duplicate header parameter", token(raw_header=b'{"alg":"HS256","kid":"hkdfv1-20251129","alg":"none"}'), "malformed")
add("payload a JSON array", token(raw_payload=b'["not","an","object"]'), "malformed")
add("payload invalid UTF-8", token(raw_payload=compact(claims())[:-1] + b',"x":"\xff"}'), "malformed")
add("payload trailing comma", token(raw_payload=compact(claims())[:-1] + b',}'), "malformed")
add("padded base64url", token().split(".")[0] + "=." + ".".join(token().split(".")[1:]), "malformed")
STD = token(raw_header=b'{"alg":"HS256","kid":"hkdfv1-20251129","typ":"JWT","x":">>>???"}')
STD_HEADER = STD.split(".")[0].replace("-", "+").replace("_", "/")
assert "+" in STD_HEADER and "/" in STD_HEADER
add("standard base64 alphabet", STD_HEADER + "." + ".".join(STD.split(".")[1:]), "malformed")
add("two parts", ".".join(token().split(".")[:2]), "malformed")
add("four parts", token() + ".e30", "malformed")
add("oversized", token(payload=claims(padding="p" * 9000)), "malformed")

here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
with open(os.path.join(here, "ReferenceTokens.swift"), "w") as out:
    out.write("// Generated by reference/make_reference_tokens.py (Python hmac/hashlib/base64/json); do not edit.\n")
    out.write("// Regenerate: python3 Tests/ParleyAuthTests/reference/make_reference_tokens.py\n\n")
    out.write("enum ReferenceTokens {\n")
    out.write(f'    static let applicationKey = "{KEY}"\n')
    out.write(f'    static let secret = "{SECRET}"\n')
    out.write(f'    static let sinchSecret = "{SINCH_SECRET}"\n')
    out.write(f"    static let now: Int64 = {NOW}\n\n")
    out.write("    struct Fixture: Sendable, CustomStringConvertible {\n")
    out.write("        let name: String\n        let token: String\n        let expected: String\n        let secret: String\n")
    out.write("        var description: String { name }\n    }\n\n")
    out.write("    static let all: [Fixture] = [\n")
    for name, tok, expected, secret in fixtures:
        secret_ref = "secret" if secret == "SECRET" else "sinchSecret"
        out.write(f'        Fixture(name: {json.dumps(name)}, token: "{tok}", expected: "{expected}", secret: {secret_ref}),\n')
    out.write("    ]\n}\n")
print(f"wrote {len(fixtures)} fixtures")
