#!/usr/bin/env bash
# Re-captures every real SDP fixture and copies it where the tests, the CLI tests and
# the fuzzer look. Run as root from anywhere:  scripts/capture-offers/capture_all.sh
# Not part of `make test`: the captured files are committed.
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
FIXTURES="$ROOT/Tests/ParleySDPTests/Fixtures"
WORK="$(mktemp -d /tmp/parley-capture.XXXXXX)"
trap 'rm -rf "$WORK"' EXIT

python3 "$HERE/capture_aiortc.py" "$WORK/aiortc-offer.sdp"
bash "$HERE/capture_chromium.sh" "$WORK" "$WORK/aiortc-offer.sdp"
bash "$HERE/capture_firefox.sh" "$WORK" || echo "firefox capture failed; keeping the committed firefox-offer.sdp" >&2

mkdir -p "$FIXTURES" "$ROOT/Tests/Fixtures/sdp" "$ROOT/Fuzz/corpus/sdp"
for f in "$WORK"/*.sdp; do
  name="$(basename "$f")"
  cp "$f" "$FIXTURES/$name"
  cp "$f" "$ROOT/Tests/Fixtures/sdp/$name"
  cp "$f" "$ROOT/Fuzz/corpus/sdp/$name"
  echo "fixture $name"
done
