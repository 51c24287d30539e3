#!/bin/sh
# Installs what the build and tests need, only what is missing, quietly.
# Debian packages first (apt-get update only when something is missing), then PyPI.
# `install-deps.sh bench` also installs what `make bench` compares against and scores with:
# rtpengine (the relay comparison), espeak-ng and sox (the speech bench's sentences), Janus
# (its AudioBridge is the conference bench's peer, run as the bench's own child process) and
# the pesq and pystoi scorers (PESQ-WB, STOI; numpy and scipy come with them).
set -eu

# C libraries for the shims; chromium and iproute2 (network namespaces) for the Chromium
# interop test; python3 with pip and venv for the aiortc one; websockets and numpy for the Python
# client (scripts/pyclient); h2 for the push provider emulator (scripts/push-emulator;
# `cryptography` comes with aiortc); SIPp (sip-tester), baresip and Kamailio, the real SIP
# peers of the SIP tests (docs/sip.md); socat, the TLS front that makes SIPp (built without
# TLS in Debian) a SIP over TLS peer; espeak-ng, parleyd's text to speech (a backend's `say`
# and `#tts[...]` prompts, docs/backend.md).
APT_PACKAGES="pkg-config libopus-dev libsrtp2-dev libssl-dev libsqlite3-dev libcurl4-openssl-dev libasound2-dev chromium iproute2 python3 python3-pip sip-tester baresip-core kamailio socat espeak-ng"
PIP_PACKAGES="aiortc websockets h2 numpy"
if [ "${1:-}" = "bench" ]; then
    APT_PACKAGES="$APT_PACKAGES rtpengine-daemon sox janus"
    PIP_PACKAGES="$PIP_PACKAGES pesq pystoi"
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi

missing=""
for pkg in $APT_PACKAGES; do
    # A package counts as present if dpkg has it, or (python3, pip) if the command exists.
    case "$pkg" in
        python3) command -v python3 >/dev/null 2>&1 && continue ;;
        python3-pip) python3 -m pip --version >/dev/null 2>&1 && continue ;;
    esac
    if ! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed"; then
        missing="$missing $pkg"
    fi
done
# The bench starts Janus itself with a private configuration; Debian's janus.service, with
# the packaged one (all plugins and transports on public ports), must never run beside it.
# Masked before the install, so the package's postinst cannot start it either; stopped as
# well where systemd runs and the unit was started before this script masked it.
quiet_janus_service() {
    case " $APT_PACKAGES " in *" janus "*) ;; *) return 0 ;; esac
    if [ ! -L /etc/systemd/system/janus.service ]; then
        $SUDO mkdir -p /etc/systemd/system
        $SUDO ln -sf /dev/null /etc/systemd/system/janus.service
    fi
    if [ -d /run/systemd/system ] && systemctl is-active --quiet janus.service 2>/dev/null; then
        $SUDO systemctl stop janus.service
    fi
}
quiet_janus_service

if [ -n "$missing" ]; then
    echo "installing Debian packages:$missing"
    export DEBIAN_FRONTEND=noninteractive
    $SUDO apt-get update -qq >/dev/null
    $SUDO apt-get install -y -qq --no-install-recommends $missing >/dev/null
fi
quiet_janus_service

if [ -n "$PIP_PACKAGES" ]; then
    pip_missing=""
    for pkg in $PIP_PACKAGES; do
        if ! python3 -m pip show -q "$pkg" >/dev/null 2>&1; then pip_missing="$pip_missing $pkg"; fi
    done
    if [ -n "$pip_missing" ]; then
        echo "installing PyPI packages:$pip_missing"
        # Debian's own python3 refuses to install into itself (PEP 668) unless told to.
        extra=""
        if python3 -m pip install --help 2>/dev/null | grep -q -- "--break-system-packages"; then
            extra="--break-system-packages"
        fi
        python3 -m pip install -q --disable-pip-version-check $extra $pip_missing
    fi
fi
