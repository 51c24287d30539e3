#!/usr/bin/env python3
"""Calls one function of page.html in a running headless Firefox over WebDriver BiDi.

Runs inside the capture network namespace (the remote agent listens there).
Usage: bidi_driver.py PORT FUNCTION [ARG_FILE] > OUT  (same functions as driver.py)
"""
import json
import sys
import time

import websocket  # PyPI websocket-client


class BiDi:
    def __init__(self, url: str) -> None:
        # The remote agent refuses handshakes that carry an Origin header.
        self.ws = websocket.create_connection(url, timeout=60, suppress_origin=True)
        self.next_id = 0

    def call(self, method: str, params: dict) -> dict:
        self.next_id += 1
        my_id = self.next_id
        self.ws.send(json.dumps({"id": my_id, "method": method, "params": params}))
        while True:
            message = json.loads(self.ws.recv())
            if message.get("id") == my_id:
                if message.get("type") == "error":
                    raise SystemExit(f"{method} failed: {message}")
                return message["result"]


def connect(port: int) -> BiDi:
    deadline = time.time() + 60
    while True:
        try:
            return BiDi(f"ws://127.0.0.1:{port}/session")
        except OSError:
            if time.time() > deadline:
                raise SystemExit("WebDriver BiDi endpoint did not come up")
            time.sleep(0.5)


def main() -> None:
    port, function = int(sys.argv[1]), sys.argv[2]
    argument = open(sys.argv[3], encoding="utf-8").read() if len(sys.argv) > 3 else None
    bidi = connect(port)
    bidi.call("session.new", {"capabilities": {}})
    contexts = bidi.call("browsingContext.getTree", {})["contexts"]
    context = contexts[0]["context"]
    target = {"context": context}
    for _ in range(200):
        ready = bidi.call("script.evaluate", {"expression": f"typeof {function.split('(')[0]} === 'function'",
                                              "target": target, "awaitPromise": False})
        if ready.get("result", {}).get("value") is True:
            break
        time.sleep(0.1)
    if "(" in function:  # a whole call expression, e.g. probe(5000)
        call = function
    else:
        call = f"{function}({json.dumps(argument)})" if argument is not None else f"{function}()"
    result = bidi.call("script.evaluate", {"expression": call, "target": target, "awaitPromise": True})
    if result.get("type") == "exception":
        raise SystemExit(f"page threw: {json.dumps(result)[:2000]}")
    sys.stdout.write(result["result"]["value"])
    try:
        bidi.call("session.end", {})
    except SystemExit:
        pass


if __name__ == "__main__":
    main()
