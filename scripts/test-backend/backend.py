#!/usr/bin/env python3
"""A customer backend for Parley's tests (docs/backend.md), written from Sinch's
documentation and independent of Parley's Swift code: it checks the signature of every
callback it receives, logs each one, and answers from a script.

    backend.py --app-key KEY --secret BASE64 --script FILE --log FILE

It listens on 127.0.0.1 (a free port), prints "listening PORT", and for each POST writes a
JSON line to the log: {"event", "verified", "problem", "path", "body"}. The script is a
JSON object from event name ("ice", "ace", "pie", "dice") to the body to answer with: an object
(sent as JSON) or a string (sent as it is, to test garbage); events not in it get {}.
"""
import argparse
import base64
import datetime
import hashlib
import hmac
import json
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

REPLAY_WINDOW = datetime.timedelta(minutes=15)


def verify(method, path, headers, body, key, secret):
    """The problem with a request's signature, or None when it is Sinch's scheme, right."""
    authorization = headers.get("Authorization", "")
    scheme, _, credentials = authorization.partition(" ")
    if scheme != "Application" or ":" not in credentials:
        return "no 'Application key:signature' Authorization"
    sent_key, _, signature = credentials.partition(":")
    if sent_key != key:
        return "signed with another key"
    timestamp = headers.get("x-timestamp", "")
    try:
        when = datetime.datetime.fromisoformat(timestamp.replace("Z", "+00:00"))
    except ValueError:
        return "x-timestamp is not ISO 8601"
    if abs(datetime.datetime.now(datetime.timezone.utc) - when) > REPLAY_WINDOW:
        return "x-timestamp is stale"
    content_md5 = headers.get("Content-MD5", "")
    content_type = headers.get("Content-Type", "")
    if body:
        if content_md5 != base64.b64encode(hashlib.md5(body).digest()).decode():
            return "Content-MD5 does not match the body"
    string_to_sign = f"{method}\n{content_md5}\n{content_type}\nx-timestamp:{timestamp}\n{path}"
    expected = base64.b64encode(hmac.new(base64.b64decode(secret), string_to_sign.encode(), hashlib.sha256).digest()).decode()
    if not hmac.compare_digest(expected, signature):
        return "bad signature"
    return None


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--app-key", required=True)
    parser.add_argument("--secret", required=True)
    parser.add_argument("--script", required=True)
    parser.add_argument("--log", required=True)
    options = parser.parse_args()
    lock = threading.Lock()

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_POST(self):
            length = int(self.headers.get("Content-Length", "0"))
            body = self.rfile.read(length) if 0 < length <= 1 << 20 else b""
            problem = verify("POST", self.path, self.headers, body, options.app_key, options.secret)
            try:
                event = json.loads(body).get("event", "")
            except (ValueError, AttributeError):
                event = ""
            with lock:
                with open(options.log, "a") as log:
                    log.write(json.dumps({"event": event, "verified": problem is None, "problem": problem,
                                          "path": self.path, "body": body.decode(errors="replace")}) + "\n")
                with open(options.script) as file:
                    script = json.load(file)
            answer = script.get(event.lower(), {})
            data = answer.encode() if isinstance(answer, str) else json.dumps(answer).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *arguments):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    print(f"listening {server.server_address[1]}", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    sys.exit(main())
