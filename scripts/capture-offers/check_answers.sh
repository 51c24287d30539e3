#!/usr/bin/env bash
# One-off interop check (not part of `make test`): do aiortc, Chromium and Firefox
# accept the answers ParleySDP writes to their fresh offers? Run as root from anywhere
# after `swift build --build-tests`:  scripts/capture-offers/check_answers.sh
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
WORK="$(mktemp -d /tmp/parley-check.XXXXXX)"
source "$HERE/netns.sh"
cleanup() { netns_down; rm -rf "$WORK"; }
trap cleanup EXIT
write_answers() {
  PARLEY_SDP_ANSWER_DIR="$WORK" swift test --package-path "$ROOT" --skip-build --filter AnswerWriter >/dev/null
}

python3 "$HERE/check_aiortc_accepts.py" "$WORK" "$ROOT"

netns_up
start_chromium
ip netns exec "$NS" python3 "$HERE/driver.py" "$DEVTOOLS_PORT" startOffer >"$WORK/chromium-offer.sdp"
write_answers
echo "chromium: $(ip netns exec "$NS" python3 "$HERE/driver.py" "$DEVTOOLS_PORT" applyAnswer "$WORK/chromium-answer.sdp")"
netns_down
rm -f "$WORK"/*.sdp

netns_up
netns_add_sink_default_route
BIDI_PORT=9334
PROFILE_DIR="$(mktemp -d /tmp/parley-firefox.XXXXXX)"
printf '%s\n' 'user_pref("media.navigator.streams.fake", true);' 'user_pref("media.navigator.permission.disabled", true);' \
  'user_pref("app.update.enabled", false);' 'user_pref("datareporting.policy.dataSubmissionEnabled", false);' \
  'user_pref("network.captive-portal-service.enabled", false);' 'user_pref("network.connectivity-service.enabled", false);' \
  'user_pref("browser.safebrowsing.update.enabled", false);' >"$PROFILE_DIR/user.js"
ip netns exec "$NS" firefox-esr --headless --no-remote --profile "$PROFILE_DIR" --remote-debugging-port="$BIDI_PORT" \
  --remote-allow-hosts=127.0.0.1 "file://$HERE/page.html" >"$PROFILE_DIR.log" 2>&1 &
CHROMIUM_PID=$!
# One BiDi session spans both steps: the page keeps its connection between them.
ip netns exec "$NS" python3 "$HERE/bidi_driver.py" "$BIDI_PORT" startOffer >"$WORK/firefox-offer.sdp"
write_answers
echo "firefox: $(ip netns exec "$NS" python3 "$HERE/bidi_driver.py" "$BIDI_PORT" applyAnswer "$WORK/firefox-answer.sdp")"
