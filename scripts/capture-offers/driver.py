#!/usr/bin/env python3
"""Calls one function of page.html in a running headless Chromium over DevTools.

Runs inside the capture network namespace (the DevTools port listens there).
Usage: driver.py PORT FUNCTION [ARG_FILE] > OUT
   FUNCTION is captureOffer, captureAnswer (ARG_FILE = offer) or acceptsAnswer
   (ARG_FILE = answer). The function's string result is written to stdout.
"""
import json
import sys
import time
import urllib.request

import websocket  # PyPI websocket-client


def page_websocket_url(port: int) -> str:
    deadline = time.time() + 30
    while True:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list", timeout=2) as r:
                targets = json.load(r)
            pages = [t for t in targets if t.get("type") == "page"]
            if pages:
                return pages[0]["webSocketDebuggerUrl"]
        except OSError:
            pass
        if time.time() > deadline:
            raise SystemExit("DevTools endpoint did not come up")
        time.sleep(0.3)


def main() -> None:
    port = int(sys.argv[1])
    function = sys.argv[2]
    argument = None
    if len(sys.argv) > 3:
        with open(sys.argv[3], encoding="utf-8") as f:
            argument = f.read()
    ws = websocket.create_connection(page_websocket_url(port), timeout=60)
    # Wait until page.html's functions exist.
    expression = f"typeof {function} === 'function'"
    for _ in range(100):
        ws.send(json.dumps({"id": 1, "method": "Runtime.evaluate", "params": {"expression": expression, "returnByValue": True}}))
        reply = json.loads(ws.recv())
        if reply.get("result", {}).get("result", {}).get("value") is True:
            break
        time.sleep(0.1)
    call = f"{function}({json.dumps(argument)})" if argument is not None else f"{function}()"
    ws.send(json.dumps({"id": 2, "method": "Runtime.evaluate",
                        "params": {"expression": call, "awaitPromise": True, "returnByValue": True}}))
    while True:
        reply = json.loads(ws.recv())
        if reply.get("id") == 2:
            break
    ws.close()
    result = reply.get("result", {})
    if "exceptionDetails" in result:
        raise SystemExit(f"page threw: {json.dumps(result['exceptionDetails'])[:2000]}")
    sys.stdout.write(result["result"]["value"])


if __name__ == "__main__":
    main()
