#!/usr/bin/env bash
# Captures real Chromium SDP inside a network namespace of our own (see README.md).
#   capture_chromium.sh OUT_DIR [AIORTC_OFFER]
# Writes OUT_DIR/chromium-offer.sdp and, given an aiortc offer, OUT_DIR/chromium-answer-to-aiortc.sdp.
# Needs root, Debian `chromium`, python3 with `websocket-client`.
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
OUT="$(cd "${1:?usage: capture_chromium.sh OUT_DIR [AIORTC_OFFER]}" && pwd)"
AIORTC_OFFER="${2:-}"
source "$HERE/netns.sh"
netns_up
trap netns_down EXIT

start_chromium
ip netns exec "$NS" python3 "$HERE/driver.py" "$DEVTOOLS_PORT" captureOffer >"$OUT/chromium-offer.sdp"
echo "wrote $OUT/chromium-offer.sdp ($(wc -c <"$OUT/chromium-offer.sdp") bytes)"
if [[ -n "$AIORTC_OFFER" ]]; then
  ip netns exec "$NS" python3 "$HERE/driver.py" "$DEVTOOLS_PORT" captureAnswer "$AIORTC_OFFER" >"$OUT/chromium-answer-to-aiortc.sdp"
  echo "wrote $OUT/chromium-answer-to-aiortc.sdp"
fi
