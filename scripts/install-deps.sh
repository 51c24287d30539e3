#!/bin/sh
# Installs what the build and tests need, only what is missing, quietly.
# Debian packages first (apt-get update only when something is missing), then PyPI.
set -eu

APT_PACKAGES="pkg-config libopus-dev libsrtp2-dev libssl-dev libsqlite3-dev"
# `install-deps.sh bench`: also what `make bench` compares against. The relay benchmark starts
# its own rtpengine on its own ports, so a packaged rtpengine service does not get in the way.
BENCH_APT_PACKAGES="rtpengine-daemon"
if [ "${1:-}" = "bench" ]; then APT_PACKAGES="$APT_PACKAGES $BENCH_APT_PACKAGES"; fi
PIP_PACKAGES=""

SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi

missing=""
for pkg in $APT_PACKAGES; do
    if ! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed"; then
        missing="$missing $pkg"
    fi
done
if [ -n "$missing" ]; then
    echo "installing Debian packages:$missing"
    export DEBIAN_FRONTEND=noninteractive
    $SUDO apt-get update -qq >/dev/null
    $SUDO apt-get install -y -qq --no-install-recommends $missing >/dev/null
fi

if [ -n "$PIP_PACKAGES" ]; then
    pip_missing=""
    for pkg in $PIP_PACKAGES; do
        if ! python3 -m pip show -q "$pkg" >/dev/null 2>&1; then pip_missing="$pip_missing $pkg"; fi
    done
    if [ -n "$pip_missing" ]; then
        echo "installing PyPI packages:$pip_missing"
        python3 -m pip install -q --disable-pip-version-check $pip_missing
    fi
fi
