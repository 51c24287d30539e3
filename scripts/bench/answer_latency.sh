#!/bin/sh
# answered -> established (as the caller's `parley --json` saw them) between two `parley`
# softphones through a release parleyd on loopback, RUNS calls, the callee ringing
# RING seconds first. Also, per call, from parleyd's log: how long each leg took from its
# SDP to ICE + DTLS connected. Build first: swift build -c release --product parleyd;
# swift build -c release --product parley.
#
#   scripts/bench/answer_latency.sh [RING_SECONDS] [RUNS] [PORT]
set -eu
RING=${1:-1}; RUNS=${2:-5}; PORT=${3:-18090}
B=$(cd "$(dirname "$0")/../.." && pwd)/.build/release
DIR=$(mktemp -d)
trap 'kill $SERVER 2>/dev/null || true; rm -rf "$DIR"' EXIT
"$B/parleyd" --data-dir "$DIR" --listen "127.0.0.1:$PORT" > "$DIR/log.txt" 2>&1 &
SERVER=$!
for _ in 1 2 3 4 5 6 7 8 9 10; do grep -q "secret:" "$DIR/log.txt" 2>/dev/null && break; sleep 0.5; done
KEY=$(grep "key:" "$DIR/log.txt" | awk '{print $2}'); SECRET=$(grep "secret:" "$DIR/log.txt" | awk '{print $2}')
i=0
while [ "$i" -lt "$RUNS" ]; do
  "$B/parley" listen --server "http://127.0.0.1:$PORT" --app "$KEY" --secret "$SECRET" --as bob \
      --answer --answer-delay "$RING" --count 1 --json > "$DIR/bob.json" 2>&1 &
  CALLEE=$!
  sleep 1
  "$B/parley" call bob --server "http://127.0.0.1:$PORT" --app "$KEY" --secret "$SECRET" --as alice \
      --duration 1 --json > "$DIR/alice-$i.json" 2>&1 || true
  wait "$CALLEE" || true
  i=$((i + 1))
done
python3 - "$DIR" "$RUNS" <<'PY'
import datetime, json, re, sys
directory, runs = sys.argv[1], int(sys.argv[2])
delays = []
for i in range(runs):
    seen = {}
    for line in open(f"{directory}/alice-{i}.json"):
        try: event = json.loads(line)
        except ValueError: continue
        seen.setdefault(event["event"], event["timeMs"])
    if "answered" in seen and "established" in seen: delays.append(seen["established"] - seen["answered"])
legs = {}
for line in open(f"{directory}/log.txt"):
    m = re.match(r"(\S+) info (\S+) call=(\S+)(.*)", line)
    if not m: continue
    t = datetime.datetime.fromisoformat(m.group(1).replace("Z", "+00:00")).timestamp() * 1000
    kind, rest, e = m.group(2), m.group(4), legs.setdefault(m.group(3), {})
    if kind == "signal.out" and "type=call.media" in rest: e.setdefault("media", t)
    if kind == "signal.in" and "type=call.ack" in rest: e.setdefault("ack", t)
    if kind == "media.leg.connected": e.setdefault("caller" if "leg=caller" in rest else "callee", t)
print("answered -> established, ms:", " ".join(str(d) for d in delays),
      "| median", sorted(delays)[len(delays) // 2] if delays else "-")
print("caller leg, call.media -> connected, ms:", " ".join("%.0f" % (e["caller"] - e["media"]) for e in legs.values() if "caller" in e and "media" in e))
print("callee leg, call.ack (early SDP answer) -> connected, ms:", " ".join("%.0f" % (e["callee"] - e["ack"]) for e in legs.values() if "callee" in e and "ack" in e))
PY
