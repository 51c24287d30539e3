# Sourced by the capture scripts: a network namespace joined to the host by a veth
# pair, so Chromium gathers only the veth address (it ignores loopback) and never
# reaches this machine's outside interface. Torn down by netns_down (EXIT trap).
NS=parleycap
HOST_IF=vpcA
NS_IF=vpcB
DEVTOOLS_PORT=9333
CHROMIUM_PID=""
PROFILE_DIR=""

netns_down() {
  # Every step tolerates failure (this runs from the EXIT trap under `set -e`).
  if [[ -n "$CHROMIUM_PID" ]]; then kill "$CHROMIUM_PID" 2>/dev/null || true; wait "$CHROMIUM_PID" 2>/dev/null || true; fi
  # Chromium's helper processes (zygote, renderer) live in our namespace: end them by pid.
  if ip netns list 2>/dev/null | grep -qw "$NS"; then
    for pid in $(ip netns pids "$NS" 2>/dev/null || true); do kill "$pid" 2>/dev/null || true; done
    sleep 0.5
    for pid in $(ip netns pids "$NS" 2>/dev/null || true); do kill -9 "$pid" 2>/dev/null || true; done
  fi
  if [[ -n "$PROFILE_DIR" ]]; then rm -rf "$PROFILE_DIR" "$PROFILE_DIR.log" 2>/dev/null || true; fi
  ip link del "$HOST_IF" 2>/dev/null || true
  ip netns del "$NS" 2>/dev/null || true
}

netns_up() {
  netns_down
  ip netns add "$NS"
  ip link add "$HOST_IF" type veth peer name "$NS_IF"
  ip link set "$NS_IF" netns "$NS"
  ip addr add 10.203.0.1/30 dev "$HOST_IF"
  ip link set "$HOST_IF" up
  ip -n "$NS" addr add 10.203.0.2/30 dev "$NS_IF"
  ip -n "$NS" link set "$NS_IF" up
  ip -n "$NS" link set lo up
}

start_chromium() {
  PROFILE_DIR="$(mktemp -d /tmp/parley-chromium.XXXXXX)"
  ip netns exec "$NS" chromium --headless=new --no-sandbox --disable-gpu \
    --use-fake-device-for-media-stream --use-fake-ui-for-media-stream \
    --no-first-run --no-default-browser-check --disable-background-networking \
    --disable-component-update --disable-sync --metrics-recording-only \
    --remote-debugging-port="$DEVTOOLS_PORT" --remote-debugging-address=127.0.0.1 \
    --user-data-dir="$PROFILE_DIR" "file://$HERE/page.html" >"$PROFILE_DIR.log" 2>&1 &
  CHROMIUM_PID=$!
}

# Firefox exposes only the "default address" (the source address of the default
# route) unless the page holds a real capture permission. A default route toward a
# second veth pair whose both ends sit inside the namespace gives it one without
# any path out: the namespace does not forward, so such packets die at vpcD.
netns_add_sink_default_route() {
  ip -n "$NS" link add vpcC type veth peer name vpcD
  ip -n "$NS" addr add 10.203.1.1/30 dev vpcC
  ip -n "$NS" addr add 10.203.1.2/30 dev vpcD
  ip -n "$NS" link set vpcC up
  ip -n "$NS" link set vpcD up
  ip netns exec "$NS" sysctl -qw net.ipv4.ip_forward=0
  ip -n "$NS" route add default via 10.203.1.2 dev vpcC
}
