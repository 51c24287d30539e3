#!/usr/bin/env bash
# Captures a real Firefox ESR audio offer inside a network namespace of our own.
#   capture_firefox.sh OUT_DIR      -> OUT_DIR/firefox-offer.sdp
# Needs root, Debian `firefox-esr`, python3 with `websocket-client`.
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
OUT="$(cd "${1:?usage: capture_firefox.sh OUT_DIR}" && pwd)"
source "$HERE/netns.sh"
netns_up
trap netns_down EXIT
netns_add_sink_default_route

BIDI_PORT=9334
FUNCTION="${FUNCTION:-captureOffer}"
PROFILE_DIR="$(mktemp -d /tmp/parley-firefox.XXXXXX)"
# Fake microphone without a permission prompt; no background network chatter.
cat >"$PROFILE_DIR/user.js" <<'PREFS'
user_pref("media.navigator.streams.fake", true);
user_pref("media.navigator.permission.disabled", true);
user_pref("browser.shell.checkDefaultBrowser", false);
user_pref("app.update.enabled", false);
user_pref("datareporting.policy.dataSubmissionEnabled", false);
user_pref("toolkit.telemetry.enabled", false);
user_pref("network.captive-portal-service.enabled", false);
user_pref("network.connectivity-service.enabled", false);
user_pref("browser.safebrowsing.update.enabled", false);
user_pref("remote.prefs.recommended", true);
user_pref("media.peerconnection.ice.default_address_only", false);
user_pref("media.peerconnection.ice.obfuscate_host_addresses", false);
user_pref("media.peerconnection.ice.loopback", true);
user_pref("network.process.enabled", false);
user_pref("media.peerconnection.mtransport_process", false);
PREFS
MOZ_LOG="${MOZ_LOG:-}" ip netns exec "$NS" firefox-esr --headless --no-remote --profile "$PROFILE_DIR" \
  --remote-debugging-port="$BIDI_PORT" --remote-allow-hosts=127.0.0.1 \
  "file://$HERE/page.html" >"${FIREFOX_LOG:-$PROFILE_DIR.log}" 2>&1 &
CHROMIUM_PID=$!   # netns_down ends this pid (the variable name is shared with Chromium)
ip netns exec "$NS" python3 "$HERE/bidi_driver.py" "$BIDI_PORT" "$FUNCTION" >"$OUT/firefox-offer.sdp"
echo "wrote $OUT/firefox-offer.sdp ($(wc -c <"$OUT/firefox-offer.sdp") bytes)"
