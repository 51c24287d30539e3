#!/usr/bin/env python3
"""Self-check of chromium_peer.py: pairs it with a minimal aiortc peer on the host.

    python3 scripts/interop/selfcheck_chromium.py [--seconds 5] [--cases offer:opus,answer:pcmu]

The aiortc peer plays the Swift leg's part: it reads `ready`, binds to the host end of
the veth pair (aioice's `get_host_addresses` is replaced to return only that address,
and no STUN server is configured), exchanges SDP over chromium_peer.py's stdin/stdout,
sends a 1000 Hz sine while Chromium sends 440 Hz, and records what arrives.

A case passes when the dominant frequency of both recordings is within 10 Hz of the
tone sent the other way and both sides received at least 95 % of seconds * 50 frames.
Needs root, Debian `chromium`, aiortc and numpy (PyPI). Exit status 0 when all pass.
"""
import argparse
import asyncio
import fractions
import json
import math
import os
import sys
import tempfile
import time
import wave

import aioice.ice
import numpy as np
from aiortc import (MediaStreamTrack, RTCConfiguration, RTCPeerConnection, RTCRtpSender,
                    RTCSessionDescription)
from aiortc.mediastreams import MediaStreamError
from av import AudioFrame

HERE = os.path.dirname(os.path.abspath(__file__))
PEER = os.path.join(HERE, "chromium_peer.py")
CHROMIUM_TONE = 440.0
AIORTC_TONE = 1000.0


class ToneTrack(MediaStreamTrack):
    """20 ms frames of a sine at 48 kHz, mono s16, for `seconds`; then the track ends."""

    kind = "audio"

    def __init__(self, hertz: float, seconds: float) -> None:
        super().__init__()
        self.hertz = hertz
        self.frames_total = int(round(seconds * 50))
        self.sent = 0
        self.start = None

    async def recv(self) -> AudioFrame:
        if self.sent >= self.frames_total:
            self.stop()
            raise MediaStreamError
        if self.start is None:
            self.start = time.monotonic()
        wait = self.start + self.sent * 0.02 - time.monotonic()
        if wait > 0:
            await asyncio.sleep(wait)
        n = np.arange(self.sent * 960, (self.sent + 1) * 960)
        samples = (0.316 * 32767 * np.sin(2 * np.pi * self.hertz * n / 48000)).astype(np.int16)
        frame = AudioFrame.from_ndarray(samples.reshape(1, -1), format="s16", layout="mono")
        frame.sample_rate = 48000
        frame.pts = self.sent * 960
        frame.time_base = fractions.Fraction(1, 48000)
        self.sent += 1
        return frame


class Recorder:
    """First channel of every frame the remote track delivers."""

    def __init__(self) -> None:
        self.chunks: list[np.ndarray] = []
        self.frames = 0
        self.sample_rate = 0
        self.task: asyncio.Task | None = None

    def attach(self, track: MediaStreamTrack) -> None:
        self.task = asyncio.ensure_future(self._run(track))

    async def _run(self, track: MediaStreamTrack) -> None:
        try:
            while True:
                frame = await track.recv()
                data = frame.to_ndarray()
                channels = len(frame.layout.channels)
                mono = data.reshape(-1, channels)[:, 0] if data.shape[0] == 1 else data[0]
                self.chunks.append(mono.astype(np.int16))
                self.sample_rate = frame.sample_rate
                self.frames += 1
        except MediaStreamError:
            pass

    def samples(self) -> np.ndarray:
        return np.concatenate(self.chunks) if self.chunks else np.zeros(0, dtype=np.int16)


def dominant_frequency(samples: np.ndarray, rate: int) -> float:
    if len(samples) < rate // 10:
        return 0.0
    x = samples.astype(np.float64)
    x -= x.mean()
    spectrum = np.abs(np.fft.rfft(x * np.hanning(len(x))))
    spectrum[0] = 0
    return float(np.argmax(spectrum) * rate / len(x))


def read_wav(path: str) -> tuple[np.ndarray, int]:
    with wave.open(path, "rb") as w:
        rate = w.getframerate()
        data = np.frombuffer(w.readframes(w.getnframes()), dtype="<i2")
        return data.reshape(-1, w.getnchannels())[:, 0], rate


def restrict_codecs(transceiver, codec: str) -> None:
    wanted = "audio/pcmu" if codec == "pcmu" else "audio/opus"
    codecs = [c for c in RTCRtpSender.getCapabilities("audio").codecs if c.mimeType.lower() == wanted]
    transceiver.setCodecPreferences(codecs)


async def run_case(role: str, codec: str, seconds: float, workdir: str, pcap: bool) -> dict:
    """One pairing; `role` is Chromium's role."""
    record = os.path.join(workdir, f"chromium-{role}-{codec}.wav")
    extra = ["--pcap", os.path.join(workdir, f"chromium-{role}-{codec}.pcap")] if pcap else []
    started = time.monotonic()
    proc = await asyncio.create_subprocess_exec(
        sys.executable, PEER, "--role", role, "--codec", codec, "--tone", str(CHROMIUM_TONE),
        "--seconds", str(seconds), "--record", record, "--timeout", str(seconds + 40), *extra,
        stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE)
    times: dict[str, float] = {}
    states: list[str] = []
    pc = None
    recorder = Recorder()

    async def read_message() -> dict:
        line = await asyncio.wait_for(proc.stdout.readline(), timeout=seconds + 40)
        if not line:
            raise RuntimeError("chromium_peer.py ended without a message")
        message = json.loads(line)
        if message.get("type") == "error":
            raise RuntimeError(f"chromium_peer.py: {message.get('message')}")
        return message

    def send(message: dict) -> None:
        proc.stdin.write((json.dumps(message) + "\n").encode())

    try:
        ready = await read_message()
        assert ready["type"] == "ready", ready
        address = ready["address"]
        times["ready"] = time.monotonic() - started
        aioice.ice.get_host_addresses = lambda use_ipv4, use_ipv6: [address]
        pc = RTCPeerConnection(RTCConfiguration(iceServers=[]))
        pc.on("track", recorder.attach)
        tone = ToneTrack(AIORTC_TONE, seconds)
        if role == "offer":
            offer = await read_message()
            assert offer["type"] == "offer", offer
            times["sdp"] = time.monotonic() - started
            await pc.setRemoteDescription(RTCSessionDescription(offer["sdp"], "offer"))
            transceiver = pc.getTransceivers()[0]
            restrict_codecs(transceiver, codec)
            pc.addTrack(tone)
            await pc.setLocalDescription(await pc.createAnswer())
            send({"type": "answer", "sdp": pc.localDescription.sdp})
        else:
            transceiver = pc.addTransceiver(tone, direction="sendrecv")
            restrict_codecs(transceiver, codec)
            await pc.setLocalDescription(await pc.createOffer())
            send({"type": "offer", "sdp": pc.localDescription.sdp})
            answer = await read_message()
            assert answer["type"] == "answer", answer
            times["sdp"] = time.monotonic() - started
            await pc.setRemoteDescription(RTCSessionDescription(answer["sdp"], "answer"))
        peer_sdp = offer["sdp"] if role == "offer" else answer["sdp"]
        while True:
            message = await read_message()
            if message["type"] == "state":
                states.append(message["state"])
                if message["state"] == "connected":
                    times["connected"] = time.monotonic() - started
                continue
            if message["type"] == "done":
                done = message
                break
        times["done"] = time.monotonic() - started
        proc.stdin.close()
        code = await asyncio.wait_for(proc.wait(), timeout=10)
        times["exit"] = time.monotonic() - started
    finally:
        if proc.returncode is None:
            proc.terminate()
            await proc.wait()
        if pc is not None:
            await pc.close()
        if recorder.task is not None:
            recorder.task.cancel()

    chromium_samples, chromium_rate = read_wav(record)
    aiortc_samples = recorder.samples()
    result = {
        "case": f"chromium {role} {codec}",
        "exitCode": code,
        "states": states,
        "times": {k: round(v, 2) for k, v in times.items()},
        "chromiumHeard": round(dominant_frequency(chromium_samples, chromium_rate), 1),
        "aiortcHeard": round(dominant_frequency(aiortc_samples, recorder.sample_rate or 48000), 1),
        "chromiumFramesReceived": done["framesReceived"],
        "aiortcFramesReceived": recorder.frames,
        "aiortcSampleRate": recorder.sample_rate,
        "chromiumSamplesReceived": done["samplesReceived"],
        "srtpProfile": done["srtpProfile"],
        "chromiumDtlsRole": done["dtlsRole"],
        "chromiumStats": {k: v for k, v in done["stats"].items() if k != "raw"},
        "chromiumSdp": peer_sdp,
    }
    need = 0.95 * seconds * 50
    problems = []
    if code != 0:
        problems.append(f"chromium_peer.py exited {code}")
    if abs(result["chromiumHeard"] - AIORTC_TONE) > 10:
        problems.append(f"Chromium heard {result['chromiumHeard']} Hz, not {AIORTC_TONE}")
    if abs(result["aiortcHeard"] - CHROMIUM_TONE) > 10:
        problems.append(f"aiortc heard {result['aiortcHeard']} Hz, not {CHROMIUM_TONE}")
    if done["framesReceived"] < need:
        problems.append(f"Chromium received {done['framesReceived']} frames < {need}")
    if recorder.frames < need:
        problems.append(f"aiortc received {recorder.frames} frames < {need}")
    result["problems"] = problems
    return result


async def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--cases", default="offer:opus,answer:opus,offer:pcmu,answer:pcmu",
                        help="comma-separated ROLE:CODEC, ROLE being Chromium's role")
    parser.add_argument("--keep", help="directory to keep the recordings and SDP in")
    parser.add_argument("--pcap", action="store_true",
                        help="with --keep: also capture the veth traffic of each case")
    parser.add_argument("--verbose", action="store_true", help="print the SDP and all stats")
    args = parser.parse_args()
    workdir = args.keep or tempfile.mkdtemp(prefix="parley-selfcheck-")
    os.makedirs(workdir, exist_ok=True)
    failures = 0
    for case in args.cases.split(","):
        role, codec = case.split(":")
        began = time.monotonic()
        try:
            result = await run_case(role, codec, args.seconds, workdir, bool(args.pcap and args.keep))
        except Exception as e:  # one broken case must not hide the others
            result = {"case": f"chromium {role} {codec}", "problems": [f"{type(e).__name__}: {e}"]}
        result["wallSeconds"] = round(time.monotonic() - began, 2)
        sdp = result.pop("chromiumSdp", None)
        if args.keep and sdp:
            with open(os.path.join(workdir, f"chromium-{role}-{codec}.sdp"), "w") as f:
                f.write(sdp)
        if not args.verbose:
            result.pop("chromiumStats", None)
        elif sdp:
            result["chromiumSdp"] = sdp.splitlines()
        verdict = "FAIL" if result["problems"] else "ok"
        failures += bool(result["problems"])
        print(f"{verdict} {json.dumps(result, indent=None if not args.verbose else 2)}", flush=True)
    if not args.keep:
        for name in os.listdir(workdir):
            os.remove(os.path.join(workdir, name))
        os.rmdir(workdir)
    print(f"{'all passed' if failures == 0 else f'{failures} case(s) failed'}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
