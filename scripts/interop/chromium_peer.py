#!/usr/bin/env python3
"""Headless Chromium as the remote WebRTC peer of the Swift interop tests.

Speaks the stdio protocol of scripts/interop/README.md:

    python3 scripts/interop/chromium_peer.py --role offer|answer --codec opus|pcmu \
        --tone HZ --seconds S --record OUT.wav [--timeout T (whole run, default 60)]

Chromium ignores loopback when it gathers ICE candidates, so it runs in a network
namespace of its own (`parley-cr-<pid>`), joined to the host by a veth pair
(`pcrh<pid>` on the host, `pcrn<pid>` inside) on a private /30 from 10.201.0.0/16.
The `ready` message names the host end; the test's leg binds there. The namespace has
no default route, so Chromium can reach nothing but the host's veth address.

The page (chromium_peer.html) is driven over the DevTools protocol through
`--remote-debugging-pipe`: Chromium reads commands from its fd 3 and writes replies to
its fd 4, each a JSON object ending in a NUL byte. No DevTools port is opened, so the
script needs no network path into the namespace.

What it sends and records: the fake microphone plays a generated WAV of the tone
(Chromium loops the file), with echo cancellation, noise suppression and gain control
off; `setCodecPreferences` keeps only the chosen codec (plus telephone-event at its
clock rate unless --no-telephone-event). The remote track plays in a muted <audio>
element (Chromium renders remote WebRTC audio, and so feeds WebAudio, only then) and
goes through an AudioWorklet in a 48 kHz AudioContext; recording starts when the
connection state becomes `connected`. After --seconds of sending the sender's track
is replaced by none (RTP stops, RTCP goes on), one more second is recorded, then the
`done` message reports getStats (framesReceived = inbound packetsReceived, 20 ms each).

Other options: --pcap FILE writes the veth traffic (DTLS handshakes and RTP/RTCP headers
are in clear) for debugging; --no-telephone-event; --chromium PATH (or PARLEY_CHROMIUM).
Namespaces, veth pairs and work directories of runs whose process is gone are removed
at start; Chromium dies with this script (PR_SET_PDEATHSIG), even on SIGKILL.

Needs root (ip netns), Debian `chromium`. Python standard library only.
"""
import argparse
import array
import atexit
import base64
import ctypes
import fcntl
import json
import math
import os
import queue
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time
import wave

HERE = os.path.dirname(os.path.abspath(__file__))
PAGE = os.path.join(HERE, "chromium_peer.html")
NS_PREFIX = "parley-cr-"
SAMPLE_RATE = 48000
# Samples per DevTools reply when fetching the recording (base64 of 2 MB).
CHUNK_SAMPLES = 1 << 20


class PeerError(Exception):
    pass


def log(text: str) -> None:
    sys.stderr.write(f"chromium_peer: {text}\n")
    sys.stderr.flush()


_stdout_lock = threading.Lock()


def emit(message: dict) -> None:
    """One protocol line on stdout. A closed stdout must not turn into a second failure."""
    try:
        with _stdout_lock:
            sys.stdout.write(json.dumps(message) + "\n")
            sys.stdout.flush()
    except (BrokenPipeError, ValueError, OSError):
        pass


def run(*args: str, check: bool = True) -> subprocess.CompletedProcess:
    result = subprocess.run(list(args), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if check and result.returncode != 0:
        raise PeerError(f"{' '.join(args)} failed: {result.stderr.strip()}")
    return result


def pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


# ---------------------------------------------------------------------------------------
# Network namespace and veth pair


class Network:
    """The namespace, the veth pair and their addresses; `down()` is idempotent."""

    def __init__(self, pid: int) -> None:
        self.ns = f"{NS_PREFIX}{pid}"
        self.host_if = f"pcrh{pid}"
        self.ns_if = f"pcrn{pid}"
        self.host_address = ""
        self.ns_address = ""
        self.created_ns = False
        self.created_link = False

    @staticmethod
    def remove_stale() -> None:
        """Namespaces left by runs whose process is gone (killed with SIGKILL, say)."""
        listing = run("ip", "netns", "list", check=False).stdout
        for line in listing.splitlines():
            name = line.split()[0] if line.split() else ""
            if not name.startswith(NS_PREFIX):
                continue
            suffix = name[len(NS_PREFIX):]
            if not suffix.isdigit() or pid_alive(int(suffix)):
                continue
            log(f"removing stale namespace {name}")
            run("ip", "link", "del", f"pcrh{suffix}", check=False)
            run("ip", "netns", "del", name, check=False)
        # Work directories (profile, tone) of runs that are gone.
        base = tempfile.gettempdir()
        for entry in os.listdir(base):
            parts = entry.split("-")
            if (entry.startswith(NS_PREFIX) and len(parts) >= 4 and parts[2].isdigit()
                    and not pid_alive(int(parts[2]))):
                shutil.rmtree(os.path.join(base, entry), ignore_errors=True)

    @staticmethod
    def pick_subnet(pid: int) -> tuple[str, str]:
        """A /30 in 10.201.0.0/16 not already on any interface, starting from one the pid picks."""
        used = run("ip", "-o", "-4", "addr", "show", check=False).stdout
        routes = run("ip", "-4", "route", "show", check=False).stdout
        blocks = 1 << 14
        for step in range(blocks):
            index = (pid + step) % blocks
            third, fourth = divmod(index * 4, 256)
            base = f"10.201.{third}.{fourth}"
            host = f"10.201.{third}.{fourth + 1}"
            if f" {host}/" in used or f"{base}/30" in routes:
                continue
            return host, f"10.201.{third}.{fourth + 2}"
        raise PeerError("no free /30 left in 10.201.0.0/16")

    def up(self) -> None:
        self.host_address, self.ns_address = self.pick_subnet(os.getpid())
        run("ip", "netns", "add", self.ns)
        self.created_ns = True
        run("ip", "link", "add", self.host_if, "type", "veth", "peer", "name", self.ns_if)
        self.created_link = True
        run("ip", "link", "set", self.ns_if, "netns", self.ns)
        # IPv4 only: no link-local IPv6 addresses, so no neighbour discovery chatter on the
        # link and no IPv6 candidate that could ever be gathered.
        with open(f"/proc/sys/net/ipv6/conf/{self.host_if}/disable_ipv6", "w") as f:
            f.write("1")
        run("ip", "netns", "exec", self.ns, "sysctl", "-qw", f"net.ipv6.conf.{self.ns_if}.disable_ipv6=1")
        run("ip", "addr", "add", f"{self.host_address}/30", "dev", self.host_if)
        run("ip", "link", "set", self.host_if, "up")
        run("ip", "-n", self.ns, "addr", "add", f"{self.ns_address}/30", "dev", self.ns_if)
        run("ip", "-n", self.ns, "link", "set", self.ns_if, "up")
        run("ip", "-n", self.ns, "link", "set", "lo", "up")

    def pids_inside(self) -> list[int]:
        if not self.created_ns:
            return []
        out = run("ip", "netns", "pids", self.ns, check=False).stdout
        return [int(p) for p in out.split() if p.isdigit()]

    def down(self) -> None:
        if self.created_link:
            run("ip", "link", "del", self.host_if, check=False)
            self.created_link = False
        if self.created_ns:
            run("ip", "netns", "del", self.ns, check=False)
            self.created_ns = False


# ---------------------------------------------------------------------------------------
# Optional packet capture of the veth (what Chromium and the leg really send)


class PacketCapture:
    """Writes every frame seen on the host end of the veth pair to a classic pcap file.
    DTLS handshakes and the RTP/RTCP/SRTCP headers are in clear, so this shows what
    Chromium sent even when the leg cannot make sense of it."""

    def __init__(self, path: str, interface: str) -> None:
        self.sock = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(0x0003))
        self.sock.bind((interface, 0))
        self.sock.settimeout(0.2)
        self.file = open(path, "wb")
        # pcap global header: magic, version 2.4, UTC offset, accuracy, snaplen, Ethernet.
        self.file.write(struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 1))
        self.running = True
        self.thread = threading.Thread(target=self._run, name="pcap", daemon=True)
        self.thread.start()

    def _run(self) -> None:
        while self.running:
            try:
                frame = self.sock.recv(65535)
            except socket.timeout:
                continue
            except OSError:
                break
            now = time.time()
            seconds = int(now)
            self.file.write(struct.pack("<IIII", seconds, int((now - seconds) * 1e6), len(frame), len(frame)))
            self.file.write(frame)

    def stop(self) -> None:
        self.running = False
        self.thread.join(timeout=1)
        self.sock.close()
        self.file.close()


# ---------------------------------------------------------------------------------------
# DevTools protocol over Chromium's pipe (fd 3 in, fd 4 out, NUL-terminated JSON)


class DevTools:
    def __init__(self, to_browser: int, from_browser: int) -> None:
        self.to_browser = to_browser
        self.from_browser = from_browser
        self.next_id = 0
        self.replies: dict[int, dict] = {}
        self.cond = threading.Condition()
        self.write_lock = threading.Lock()
        self.closed = False
        self.crashed = False
        self.reader = threading.Thread(target=self._read, name="devtools-reader", daemon=True)
        self.reader.start()

    def _read(self) -> None:
        buffer = b""
        try:
            while True:
                data = os.read(self.from_browser, 1 << 16)
                if not data:
                    break
                buffer += data
                while b"\0" in buffer:
                    raw, buffer = buffer.split(b"\0", 1)
                    self._dispatch(json.loads(raw))
        except OSError:
            pass
        with self.cond:
            self.closed = True
            self.cond.notify_all()

    def _dispatch(self, message: dict) -> None:
        if "id" in message:
            with self.cond:
                self.replies[message["id"]] = message
                self.cond.notify_all()
            return
        method = message.get("method", "")
        params = message.get("params", {})
        if method == "Runtime.consoleAPICalled":
            text = " ".join(str(a.get("value", a.get("description", ""))) for a in params.get("args", []))
            log(f"console.{params.get('type')}: {text}")
        elif method == "Runtime.exceptionThrown":
            details = params.get("exceptionDetails", {})
            log(f"page exception: {details.get('exception', {}).get('description', details.get('text'))}")
        elif method in ("Inspector.targetCrashed", "Target.targetCrashed"):
            log("page crashed")
            with self.cond:
                self.crashed = True
                self.cond.notify_all()

    def call(self, method: str, params: dict | None = None, session: str | None = None,
             timeout: float = 30.0) -> dict:
        with self.write_lock:
            self.next_id += 1
            ident = self.next_id
            message = {"id": ident, "method": method, "params": params or {}}
            if session:
                message["sessionId"] = session
            data = json.dumps(message).encode() + b"\0"
            try:
                while data:
                    written = os.write(self.to_browser, data)
                    data = data[written:]
            except OSError as e:
                raise PeerError(f"DevTools pipe write failed: {e}") from e
        deadline = time.monotonic() + timeout
        with self.cond:
            while ident not in self.replies:
                if self.closed:
                    raise PeerError(f"Chromium closed the DevTools pipe during {method}")
                if self.crashed:
                    raise PeerError(f"the page crashed during {method}")
                left = deadline - time.monotonic()
                if left <= 0:
                    raise PeerError(f"DevTools {method} timed out after {timeout:.0f} s")
                self.cond.wait(left)
            reply = self.replies.pop(ident)
        if "error" in reply:
            raise PeerError(f"DevTools {method}: {reply['error'].get('message')}")
        return reply.get("result", {})


class Page:
    def __init__(self, devtools: DevTools, session: str) -> None:
        self.devtools = devtools
        self.session = session

    def evaluate(self, expression: str, timeout: float = 30.0, await_promise: bool = True):
        result = self.devtools.call("Runtime.evaluate", {
            "expression": expression, "awaitPromise": await_promise, "returnByValue": True,
        }, session=self.session, timeout=timeout)
        if "exceptionDetails" in result:
            details = result["exceptionDetails"]
            text = details.get("exception", {}).get("description") or details.get("text", "")
            raise PeerError(f"page: {text.splitlines()[0] if text else 'exception'}")
        return result.get("result", {}).get("value")

    def call(self, function: str, *args, timeout: float = 30.0):
        arguments = ", ".join(json.dumps(a) for a in args)
        return self.evaluate(f"window.parley.{function}({arguments})", timeout=timeout)


# ---------------------------------------------------------------------------------------
# Chromium


def write_tone(path: str, hertz: float, seconds: float) -> None:
    """Mono 16-bit sine at about -10 dBFS. Chromium loops the file, so it lasts whole
    seconds: an integer frequency then loops without a click."""
    duration = int(math.ceil(seconds)) + 2
    amplitude = 32767 * 10 ** (-10 / 20)
    step = 2 * math.pi * hertz / SAMPLE_RATE
    frames = array.array("h", (int(round(amplitude * math.sin(step * n)))
                               for n in range(duration * SAMPLE_RATE)))
    if sys.byteorder != "little":
        frames.byteswap()
    with wave.open(path, "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(SAMPLE_RATE)
        w.writeframes(frames.tobytes())


def openssl_profile_name(chromium_name: str) -> str:
    """Chromium's `srtpCipher` (e.g. SRTP_AES128_CM_HMAC_SHA1_80) under the OpenSSL name
    of RFC 5764's profile (SRTP_AES128_CM_SHA1_80), as aiortc_peer.py reports it."""
    name = chromium_name.upper()
    if "GCM" in name:
        return "SRTP_AEAD_AES_256_GCM" if "256" in name else "SRTP_AEAD_AES_128_GCM"
    if "CM" in name and name.endswith("80"):
        return "SRTP_AES128_CM_SHA1_80"
    if "CM" in name and name.endswith("32"):
        return "SRTP_AES128_CM_SHA1_32"
    return chromium_name


def write_recording(path: str, pcm: bytes) -> None:
    with wave.open(path, "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(SAMPLE_RATE)
        w.writeframes(pcm)


def _die_with_parent() -> None:
    # Chromium must not outlive this script even if it is killed with SIGKILL.
    # PR_SET_PDEATHSIG (1) survives the execs of `ip netns exec` and `bash`.
    try:
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL, 0, 0, 0)
    except (OSError, AttributeError):
        pass


class Chromium:
    def __init__(self, binary: str, network: Network, workdir: str, tone_path: str) -> None:
        self.binary = binary
        self.network = network
        self.workdir = workdir
        self.tone_path = tone_path
        self.process: subprocess.Popen | None = None
        self.log_path = os.path.join(workdir, "chromium.log")
        self.fds: list[int] = []

    def start(self) -> DevTools:
        # Pipe fds well above 4 (bash, not dash: fds > 9), so the shell's `3<&A 4>&B` cannot clobber one with the other.
        cmd_r, cmd_w = os.pipe()
        res_r, res_w = os.pipe()
        fds = []
        for fd in (cmd_r, cmd_w, res_r, res_w):
            fds.append(fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 10))
            os.close(fd)
        cmd_r, cmd_w, res_r, res_w = fds
        self.fds = [cmd_w, res_r]
        flags = [
            "--headless=new", "--no-sandbox", "--disable-gpu",
            "--use-fake-device-for-media-stream", "--use-fake-ui-for-media-stream",
            f"--use-file-for-fake-audio-capture={self.tone_path}",
            "--autoplay-policy=no-user-gesture-required",
            # Gives the file:// page a real origin, so it may load its AudioWorklet from a Blob URL.
            "--allow-file-access-from-files",
            # With capture permission Chromium shows host addresses anyway; this makes
            # sure it never hides them behind mDNS .local names.
            "--disable-features=WebRtcHideLocalIpsWithMdns",
            "--no-first-run", "--no-default-browser-check", "--disable-background-networking",
            "--disable-component-update", "--disable-sync", "--disable-default-apps",
            "--log-level=3",
            f"--user-data-dir={os.path.join(self.workdir, 'profile')}",
            "--remote-debugging-pipe",
            "file://" + PAGE,
        ]
        script = f'exec "$0" "$@" 3<&{cmd_r} 4>&{res_w} {cmd_r}<&- {res_w}>&-'
        argv = ["ip", "netns", "exec", self.network.ns, "bash", "-c", script, self.binary, *flags]
        log_file = open(self.log_path, "wb")
        try:
            self.process = subprocess.Popen(
                argv, stdin=subprocess.DEVNULL, stdout=log_file, stderr=log_file,
                pass_fds=(cmd_r, res_w), start_new_session=True, preexec_fn=_die_with_parent)
        finally:
            log_file.close()
            os.close(cmd_r)
            os.close(res_w)
        return DevTools(cmd_w, res_r)

    def log_tail(self, lines: int = 25) -> str:
        try:
            with open(self.log_path, "r", errors="replace") as f:
                return "".join(f.readlines()[-lines:])
        except OSError:
            return ""

    def stop(self) -> None:
        process = self.process
        if process is not None and process.poll() is None:
            # Closing the pipe makes Chromium shut down by itself.
            for fd in self.fds:
                try:
                    os.close(fd)
                except OSError:
                    pass
            self.fds = []
            try:
                process.wait(timeout=3)
            except subprocess.TimeoutExpired:
                try:
                    os.killpg(process.pid, signal.SIGKILL)
                except OSError:
                    pass
                try:
                    process.wait(timeout=3)
                except subprocess.TimeoutExpired:
                    pass
        for fd in self.fds:
            try:
                os.close(fd)
            except OSError:
                pass
        self.fds = []
        # Helpers (zygote, renderers) that somehow survive are ours: end them by pid.
        for pid in self.network.pids_inside():
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        self.process = None


# ---------------------------------------------------------------------------------------
# The run


class Stdin:
    """Protocol lines from the test, read on a thread; None marks end of input."""

    def __init__(self) -> None:
        self.lines: "queue.Queue[dict | None]" = queue.Queue()
        self.eof = False
        threading.Thread(target=self._read, name="stdin-reader", daemon=True).start()

    def _read(self) -> None:
        for line in sys.stdin:
            line = line.strip()
            if not line:
                continue
            try:
                message = json.loads(line)
            except json.JSONDecodeError:
                message = None
            if isinstance(message, dict):
                self.lines.put(message)
            else:
                log(f"ignoring a line that is not a JSON object: {line[:80]}")
        self.lines.put(None)

    def get(self, timeout: float) -> dict | None:
        """The next message, None at end of input; raises queue.Empty on timeout."""
        if self.eof:
            return None
        message = self.lines.get(timeout=max(0.0, timeout))
        if message is None:
            self.eof = True
        return message


class Run:
    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.deadline = time.monotonic() + args.timeout
        self.network = Network(os.getpid())
        self.workdir = ""
        self.chromium: Chromium | None = None
        self.page: Page | None = None
        self.stdin = Stdin()
        self.last_state = "new"
        self.cleaned = False
        self.capture: PacketCapture | None = None

    def left(self) -> float:
        return self.deadline - time.monotonic()

    def cleanup(self) -> None:
        if self.cleaned:
            return
        self.cleaned = True
        if self.chromium is not None:
            self.chromium.stop()
        if self.capture is not None:
            self.capture.stop()
        self.network.down()
        if self.workdir:
            shutil.rmtree(self.workdir, ignore_errors=True)

    def poll_state(self) -> str:
        state = self.page.evaluate("window.parley.state()", timeout=10, await_promise=False)
        if state != self.last_state:
            self.last_state = state
            if state != "new":
                emit({"type": "state", "state": state})
        if state in ("failed", "closed"):
            raise PeerError(f"connection {state}")
        return state

    def wait_message(self, kind: str) -> str:
        while True:
            if self.left() <= 0:
                raise PeerError(f"timed out waiting for the {kind}")
            try:
                message = self.stdin.get(timeout=min(0.1, self.left()))
            except queue.Empty:
                if self.page is not None:
                    self.poll_state()
                continue
            if message is None:
                raise PeerError(f"stdin closed before the {kind}")
            if message.get("type") == kind and isinstance(message.get("sdp"), str):
                return message["sdp"]
            log(f"ignoring message {json.dumps(message)[:120]}")

    def sleep_polling(self, seconds: float) -> None:
        end = time.monotonic() + seconds
        while True:
            now = time.monotonic()
            if now >= end:
                return
            if self.left() <= 0:
                raise PeerError("timed out")
            time.sleep(min(0.1, end - now))
            self.poll_state()

    def start_chromium(self) -> None:
        started = time.monotonic()
        self.workdir = tempfile.mkdtemp(prefix=f"{NS_PREFIX}{os.getpid()}-")
        tone = os.path.join(self.workdir, "tone.wav")
        write_tone(tone, self.args.tone, self.args.seconds)
        self.chromium = Chromium(self.args.chromium, self.network, self.workdir, tone)
        devtools = self.chromium.start()
        target = None
        while target is None:
            if time.monotonic() - started > 30 or self.left() <= 0:
                raise PeerError("Chromium did not open the page")
            targets = devtools.call("Target.getTargets", timeout=15).get("targetInfos", [])
            target = next((t for t in targets if t.get("type") == "page"
                           and t.get("url", "").endswith("chromium_peer.html")), None)
            if target is None:
                time.sleep(0.05)
        session = devtools.call("Target.attachToTarget",
                                {"targetId": target["targetId"], "flatten": True})["sessionId"]
        self.page = Page(devtools, session)
        devtools.call("Runtime.enable", session=session)
        while self.page.evaluate("document.readyState === 'complete' && typeof window.parley === 'object'",
                                 await_promise=False) is not True:
            if time.monotonic() - started > 30:
                raise PeerError("the page did not load")
            time.sleep(0.05)
        info = self.page.call("init", self.args.codec, not self.args.no_telephone_event, timeout=20)
        log(f"Chromium ready in {time.monotonic() - started:.2f} s (audio context {info})")

    def negotiate(self) -> None:
        gather_ms = 10000
        if self.args.role == "offer":
            sdp = self.page.call("makeOffer", gather_ms, timeout=20)
            emit({"type": "offer", "sdp": sdp})
            answer = self.wait_message("answer")
            self.page.call("acceptAnswer", answer, timeout=20)
        else:
            offer = self.wait_message("offer")
            sdp = self.page.call("answerOffer", offer, gather_ms, timeout=20)
            emit({"type": "answer", "sdp": sdp})

    def media(self) -> dict:
        while self.poll_state() != "connected":
            if self.left() <= 0:
                raise PeerError("timed out waiting for the connection")
            time.sleep(0.1)
        connected = time.monotonic()
        self.sleep_polling(self.args.seconds)
        self.page.call("stopSending", timeout=10)
        self.sleep_polling(1.0)
        stats = self.page.call("stats", timeout=10)
        total = self.page.call("stopRecording", timeout=10)
        pcm = bytearray()
        for start in range(0, total, CHUNK_SAMPLES):
            chunk = self.page.evaluate(f"window.parley.recordingChunk({start}, {CHUNK_SAMPLES})",
                                       timeout=30, await_promise=False)
            pcm += base64.b64decode(chunk)
        write_recording(self.args.record, bytes(pcm))
        log(f"media phase {time.monotonic() - connected:.2f} s, recorded {total} samples")
        return self.done_message(stats, total)

    @staticmethod
    def done_message(stats: dict, samples: int) -> dict:
        inbound = stats.get("inbound") or {}
        outbound = stats.get("outbound") or {}
        transport = stats.get("transport") or {}
        remote_inbound = stats.get("remoteInbound") or {}
        flat = {
            "packetsReceived": inbound.get("packetsReceived", 0),
            "packetsLost": inbound.get("packetsLost", 0),
            "jitter": inbound.get("jitter"),
            "jitterBufferDelay": inbound.get("jitterBufferDelay"),
            "jitterBufferEmittedCount": inbound.get("jitterBufferEmittedCount"),
            "totalSamplesReceived": inbound.get("totalSamplesReceived"),
            "concealedSamples": inbound.get("concealedSamples"),
            "bytesReceived": inbound.get("bytesReceived"),
            "packetsSent": outbound.get("packetsSent", 0),
            "bytesSent": outbound.get("bytesSent"),
            "remotePacketsLost": remote_inbound.get("packetsLost"),
            "roundTripTime": remote_inbound.get("roundTripTime"),
            "rtcpReportsReceived": remote_inbound.get("totalRoundTripTimeMeasurements"),
            "remoteSendersReports": (stats.get("remoteOutbound") or {}).get("reportsSent"),
        }
        emitted = flat["jitterBufferEmittedCount"]
        if emitted:
            flat["meanJitterBufferDelay"] = flat["jitterBufferDelay"] / emitted
        pair = stats.get("candidatePair") or {}
        local = stats.get("localCandidate") or {}
        remote = stats.get("remoteCandidate") or {}
        codec_id = inbound.get("codecId") or outbound.get("codecId")
        codec = next((c for c in stats.get("codecs", []) if c.get("id") == codec_id), {})
        flat["codec"] = codec.get("mimeType")
        flat["selectedPair"] = {
            "local": f"{local.get('address')}:{local.get('port')}",
            "remote": f"{remote.get('address')}:{remote.get('port')}",
            "requestsSent": pair.get("requestsSent"),
            "responsesReceived": pair.get("responsesReceived"),
        }
        flat["srtpCipher"] = transport.get("srtpCipher")
        flat["iceRole"] = transport.get("iceRole")
        flat["dtlsCipher"] = transport.get("dtlsCipher")
        flat["tlsVersion"] = transport.get("tlsVersion")
        flat["raw"] = {k: stats.get(k) for k in ("inbound", "outbound", "remoteInbound",
                                                 "remoteOutbound", "transport")}
        return {
            "type": "done",
            "framesReceived": flat["packetsReceived"],
            "sampleRate": SAMPLE_RATE,
            "samplesReceived": samples,
            "srtpProfile": openssl_profile_name(transport.get("srtpCipher", "")),
            "dtlsRole": transport.get("dtlsRole", ""),
            "iceRole": transport.get("iceRole", ""),
            "stats": flat,
        }

    def execute(self) -> None:
        Network.remove_stale()
        self.network.up()
        if self.args.pcap:
            self.capture = PacketCapture(self.args.pcap, self.network.host_if)
        emit({"type": "ready", "address": self.network.host_address})
        self.start_chromium()
        self.negotiate()
        emit(self.media())
        try:
            self.page.call("close", timeout=5)
        except PeerError:
            pass
        # Stay until the test closes stdin, at most 2 s.
        end = time.monotonic() + 2
        while time.monotonic() < end:
            try:
                if self.stdin.get(timeout=end - time.monotonic()) is None:
                    break
            except queue.Empty:
                break


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--role", choices=("offer", "answer"), required=True)
    parser.add_argument("--codec", choices=("opus", "pcmu"), required=True)
    parser.add_argument("--tone", type=float, required=True, help="Hz of the sine Chromium sends")
    parser.add_argument("--seconds", type=float, required=True, help="how long Chromium sends")
    parser.add_argument("--record", required=True, help="WAV file for what Chromium receives")
    parser.add_argument("--srtp-profile", choices=("gcm", "cm"),
                        help="accepted for aiortc compatibility; Chromium offers both, ignored")
    parser.add_argument("--timeout", type=float, default=60.0, help="limit for the whole run")
    parser.add_argument("--no-telephone-event", action="store_true",
                        help="negotiate the codec alone, without telephone-event")
    parser.add_argument("--pcap", help="write the veth traffic to this pcap file (debugging)")
    parser.add_argument("--chromium", default=os.environ.get("PARLEY_CHROMIUM", "/usr/bin/chromium"))
    args = parser.parse_args(argv)
    if args.seconds <= 0 or args.timeout <= 0 or args.tone <= 0:
        parser.error("--tone, --seconds and --timeout must be positive")
    return args


class Terminated(BaseException):
    pass


def main(argv: list[str]) -> int:
    args = parse_args(argv)
    if os.geteuid() != 0:
        emit({"type": "error", "message": "chromium_peer.py needs root (ip netns)"})
        return 1
    if args.srtp_profile:
        log("--srtp-profile is ignored: Chromium's DTLS-SRTP profiles cannot be restricted")
    peer = Run(args)
    atexit.register(peer.cleanup)

    def on_signal(signum, _frame):
        raise Terminated(signal.Signals(signum).name)

    for signum in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(signum, on_signal)
    try:
        peer.execute()
        return 0
    except (PeerError, OSError, subprocess.SubprocessError) as e:
        emit({"type": "error", "message": str(e)})
        if peer.chromium is not None:
            tail = peer.chromium.log_tail()
            if tail:
                log("Chromium's last log lines:\n" + tail)
        return 1
    except Terminated as e:
        emit({"type": "error", "message": f"terminated by {e}"})
        return 1
    finally:
        # Signals during the cleanup must not interrupt it.
        for signum in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
            signal.signal(signum, signal.SIG_IGN)
        peer.cleanup()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
