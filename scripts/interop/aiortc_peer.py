#!/usr/bin/env python3
"""aiortc as the remote WebRTC peer of a Parley media leg.

Speaks the stdio protocol of scripts/interop/README.md: JSON lines on stdout
(ready, offer/answer, state, done, error), JSON lines on stdin (answer/offer).
Logs go to stderr only. Written against aiortc 1.16 / aioice 0.13.

Loopback only: host candidate gathering is patched to return 127.0.0.1, there
is no STUN or TURN server, and remote candidates that are not loopback (or are
mDNS names, which aioice would resolve by multicast) are dropped before aiortc
sees them.
"""

from __future__ import annotations

import argparse
import array
import asyncio
import fractions
import json
import logging
import math
import os
import re
import sys
import threading
import time
import wave
from typing import Any, Optional

import aioice.ice
import av
from aiortc import (
    MediaStreamTrack,
    RTCConfiguration,
    RTCPeerConnection,
    RTCRtpSender,
    RTCSessionDescription,
)
from aiortc import rtcdtlstransport
from aiortc.mediastreams import MediaStreamError

LOG = logging.getLogger("aiortc_peer")

LOOPBACK_ADDRESS = "127.0.0.1"
TONE_RATE = 48000
FRAME_SECONDS = 0.020
TONE_SAMPLES = int(TONE_RATE * FRAME_SECONDS)
# -10 dBFS, as the README asks.
TONE_AMPLITUDE = 10 ** (-10 / 20)
# How long the peer keeps receiving after its own tone ends, so our last frames arrive.
TAIL_SECONDS = 1.0
# After `done`, how long to wait for stdin to close before exiting anyway.
LINGER_SECONDS = 2.0

CODEC_MIME = {"opus": "audio/opus", "pcmu": "audio/PCMU"}

SRTP_CHOICES = {
    "gcm": [rtcdtlstransport.SRTP_AEAD_AES_128_GCM],
    "cm": [rtcdtlstransport.SRTP_AES128_CM_SHA1_80],
    "both": [rtcdtlstransport.SRTP_AEAD_AES_128_GCM, rtcdtlstransport.SRTP_AES128_CM_SHA1_80],
    # aiortc's own list (AES-256-GCM first), to see a client hello listing a profile we lack.
    "all": list(rtcdtlstransport.SRTP_PROFILES),
}


class PeerFailure(Exception):
    """Ends the run with an `error` message and exit status 1."""


# --------------------------------------------------------------------------- output


_stdout_lock = threading.Lock()


def emit(message: dict[str, Any]) -> None:
    line = json.dumps(message, separators=(", ", ": "))
    with _stdout_lock:
        sys.stdout.write(line + "\n")
        sys.stdout.flush()
    LOG.info("-> %s", line if message.get("type") not in ("offer", "answer") else message["type"])


def hard_exit(status: int) -> None:
    # os._exit: a daemon thread blocked in stdin.readline() can make a normal
    # interpreter shutdown abort, and aiortc may leave tasks behind.
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    finally:
        os._exit(status)


# --------------------------------------------------------------------------- patches


def restrict_to_loopback() -> None:
    """aioice's Connection.gather_candidates looks `get_host_addresses` up as a
    global of aioice.ice at call time, so replacing the module attribute is enough
    (aiortc itself never imports it)."""

    def loopback_only(use_ipv4: bool = True, use_ipv6: bool = True) -> list[str]:
        return [LOOPBACK_ADDRESS]

    aioice.ice.get_host_addresses = loopback_only


def restrict_srtp_profiles(choice: str) -> None:
    """RTCDtlsTransport.__init__ copies the module global SRTP_PROFILES into
    `self._srtp_profiles`, which feeds both the OpenSSL use_srtp extension and the
    lookup of the negotiated profile; replacing the global before the peer
    connection exists restricts every transport of this run."""
    available = {p.openssl_profile for p in rtcdtlstransport.SRTP_PROFILES}
    wanted = [p for p in SRTP_CHOICES[choice] if p.openssl_profile in available]
    if not wanted:
        raise PeerFailure(f"libsrtp in this build supports none of the profiles for {choice!r}")
    rtcdtlstransport.SRTP_PROFILES = wanted
    LOG.info("SRTP profiles: %s", ", ".join(p.openssl_profile.decode() for p in wanted))


_CANDIDATE_RE = re.compile(r"^a=candidate:\S+ \d+ \S+ \d+ (\S+) \d+ ", re.IGNORECASE)


def keep_loopback_candidates(sdp: str) -> str:
    """Drops remote candidates we must not contact (non-loopback or mDNS)."""
    kept = []
    for line in sdp.splitlines():
        match = _CANDIDATE_RE.match(line)
        if match and match.group(1) not in ("127.0.0.1", "::1"):
            LOG.warning("dropping non-loopback remote candidate: %s", line)
            continue
        kept.append(line)
    return "\r\n".join(kept) + "\r\n"


# --------------------------------------------------------------------------- media


class ToneTrack(MediaStreamTrack):
    """A sine at `frequency` Hz for `seconds`, then silence: 20 ms frames of
    48 kHz mono s16, paced to the wall clock like aiortc's AudioStreamTrack."""

    kind = "audio"

    def __init__(self, frequency: float, seconds: float) -> None:
        super().__init__()
        self._frequency = frequency
        self._total_samples = int(round(seconds * TONE_RATE))
        self._timestamp: Optional[int] = None
        self._start = 0.0
        self.started = asyncio.get_running_loop().create_future()
        self._time_base = fractions.Fraction(1, TONE_RATE)
        self._silence = bytes(TONE_SAMPLES * 2)

    async def recv(self) -> av.AudioFrame:
        if self.readyState != "live":
            raise MediaStreamError
        if self._timestamp is None:
            self._start = time.time()
            self._timestamp = 0
            if not self.started.done():
                self.started.set_result(time.monotonic())
        else:
            self._timestamp += TONE_SAMPLES
            wait = self._start + self._timestamp / TONE_RATE - time.time()
            if wait > 0:
                await asyncio.sleep(wait)

        frame = av.AudioFrame(format="s16", layout="mono", samples=TONE_SAMPLES)
        frame.planes[0].update(self._samples(self._timestamp))
        frame.sample_rate = TONE_RATE
        frame.pts = self._timestamp
        frame.time_base = self._time_base
        return frame

    def _samples(self, first: int) -> bytes:
        if first >= self._total_samples:
            return self._silence
        step = 2 * math.pi * self._frequency / TONE_RATE
        scale = TONE_AMPLITUDE * 32767
        out = array.array("h", bytes(TONE_SAMPLES * 2))
        for i in range(min(TONE_SAMPLES, self._total_samples - first)):
            out[i] = int(round(scale * math.sin(step * (first + i))))
        return out.tobytes()


class Recorder:
    """Writes the first channel of every received frame to a 16-bit WAV."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.frames = 0
        self.samples = 0
        self.sample_rate = 0
        self._wav: Optional[wave.Wave_write] = None
        self._resampler: Optional[av.AudioResampler] = None
        self.closed = False

    def add(self, frame: av.AudioFrame) -> None:
        if self.closed:
            return
        if self._wav is None:
            self.sample_rate = frame.sample_rate
            self._wav = wave.open(self.path, "wb")
            self._wav.setnchannels(1)
            self._wav.setsampwidth(2)
            self._wav.setframerate(self.sample_rate)
            LOG.info(
                "first received frame: %d samples, %d Hz, %s %s",
                frame.samples, frame.sample_rate, frame.format.name, frame.layout.name,
            )
        elif frame.sample_rate != self.sample_rate:
            LOG.warning("sample rate changed %d -> %d; written as is", self.sample_rate, frame.sample_rate)
        mono = self._first_channel(frame)
        self._wav.writeframes(mono.tobytes())
        self.frames += 1
        self.samples += len(mono)

    def _first_channel(self, frame: av.AudioFrame) -> array.array:
        channels = len(frame.layout.channels)
        name = frame.format.name
        if name in ("s16", "s16p"):
            # Packed s16 interleaves channels in plane 0; planar keeps channel 0 there.
            per_plane = channels if name == "s16" else 1
            data = bytes(frame.planes[0])[: frame.samples * per_plane * 2]
            pcm = array.array("h")
            pcm.frombytes(data)
            if sys.byteorder != "little":
                pcm.byteswap()
            return pcm[::per_plane] if per_plane > 1 else pcm
        # Other decoders' formats: let libav convert (this downmixes instead of
        # taking channel 0, which is fine for a tone).
        if self._resampler is None:
            self._resampler = av.AudioResampler(format="s16", layout="mono", rate=frame.sample_rate)
        pcm = array.array("h")
        for converted in self._resampler.resample(frame):
            pcm.frombytes(bytes(converted.planes[0])[: converted.samples * 2])
        return pcm

    def close(self) -> None:
        if self.closed:
            return
        self.closed = True
        if self._wav is None:
            # Nothing received: still leave a valid, empty WAV behind.
            self._wav = wave.open(self.path, "wb")
            self._wav.setnchannels(1)
            self._wav.setsampwidth(2)
            self._wav.setframerate(TONE_RATE)
        self._wav.close()


# --------------------------------------------------------------------------- stdin


class StdinLines:
    """Lines from stdin via a daemon thread (works for pipes, files and ttys);
    `None` marks end of input."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.queue: asyncio.Queue[Optional[str]] = asyncio.Queue()
        self.closed = loop.create_future()
        self._loop = loop
        threading.Thread(target=self._read, name="stdin", daemon=True).start()

    def _read(self) -> None:
        try:
            for line in sys.stdin:
                self._loop.call_soon_threadsafe(self.queue.put_nowait, line)
        except Exception as exc:  # noqa: BLE001 - any read failure means end of input
            LOG.warning("stdin read failed: %s", exc)
        self._loop.call_soon_threadsafe(self._eof)

    def _eof(self) -> None:
        self.queue.put_nowait(None)
        if not self.closed.done():
            self.closed.set_result(None)

    async def message(self, wanted: str) -> dict[str, Any]:
        while True:
            line = await self.queue.get()
            if line is None:
                raise PeerFailure(f"stdin closed while waiting for {wanted!r}")
            line = line.strip()
            if not line:
                continue
            try:
                message = json.loads(line)
            except json.JSONDecodeError as exc:
                raise PeerFailure(f"bad JSON on stdin: {exc}") from exc
            if not isinstance(message, dict):
                raise PeerFailure("stdin message is not a JSON object")
            if message.get("type") == wanted:
                if not isinstance(message.get("sdp"), str):
                    raise PeerFailure(f"{wanted!r} message without an sdp string")
                return message
            LOG.warning("ignoring stdin message of type %r while waiting for %r", message.get("type"), wanted)


# --------------------------------------------------------------------------- the peer


class Peer:
    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.pc: Optional[RTCPeerConnection] = None
        self.recorder = Recorder(args.record)
        self.tone: Optional[ToneTrack] = None
        self.failed: asyncio.Future[str] = asyncio.get_running_loop().create_future()
        self.receive_task: Optional[asyncio.Task[None]] = None
        self.stage = "start"
        # Set once we close the connection ourselves: that "closed" is not news.
        self.closing = False

    def _preferred_codecs(self) -> list[Any]:
        wanted = CODEC_MIME[self.args.codec].lower()
        caps = RTCRtpSender.getCapabilities("audio").codecs
        chosen = [c for c in caps if c.mimeType.lower() in (wanted, "audio/telephone-event")]
        if not any(c.mimeType.lower() == wanted for c in chosen):
            raise PeerFailure(f"aiortc has no {self.args.codec} codec")
        return chosen

    async def _consume(self, track: MediaStreamTrack) -> None:
        try:
            while True:
                frame = await track.recv()
                self.recorder.add(frame)
        except MediaStreamError:
            LOG.info("remote track ended after %d frames", self.recorder.frames)

    async def run(self, stdin: StdinLines) -> None:
        args = self.args
        emit({"type": "ready", "address": LOOPBACK_ADDRESS})

        self.pc = pc = RTCPeerConnection(RTCConfiguration(iceServers=[]))
        self.tone = ToneTrack(args.tone, args.seconds)

        @pc.on("connectionstatechange")
        def on_state() -> None:
            state = pc.connectionState
            LOG.info("connection state %s", state)
            if state in ("connected", "failed", "closed") and not self.closing:
                emit({"type": "state", "state": state})
            if state in ("failed", "closed") and not self.failed.done():
                self.failed.set_result(state)

        @pc.on("track")
        def on_track(track: MediaStreamTrack) -> None:
            LOG.info("remote %s track", track.kind)
            if track.kind == "audio" and self.receive_task is None:
                self.receive_task = asyncio.ensure_future(self._consume(track))

        # The transceiver exists before any remote offer is applied, so that for
        # role answer setRemoteDescription picks it up (same kind, no mid yet)
        # and negotiates with our codec preferences.
        transceiver = pc.addTransceiver(self.tone, direction="sendrecv")
        transceiver.setCodecPreferences(self._preferred_codecs())

        if args.role == "offer":
            self.stage = "gathering for the offer"
            await pc.setLocalDescription(await pc.createOffer())
            emit({"type": "offer", "sdp": pc.localDescription.sdp})
            self.stage = "waiting for the answer"
            answer = await stdin.message("answer")
            self.stage = "applying the answer"
            await pc.setRemoteDescription(
                RTCSessionDescription(sdp=keep_loopback_candidates(answer["sdp"]), type="answer")
            )
        else:
            self.stage = "waiting for the offer"
            offer = await stdin.message("offer")
            self.stage = "applying the offer"
            await pc.setRemoteDescription(
                RTCSessionDescription(sdp=keep_loopback_candidates(offer["sdp"]), type="offer")
            )
            self.stage = "gathering for the answer"
            await pc.setLocalDescription(await pc.createAnswer())
            emit({"type": "answer", "sdp": pc.localDescription.sdp})

        self.stage = "connecting (ICE + DTLS) until the first tone frame"
        started = await self._until(self.tone.started, stdin)
        self.stage = "sending the tone"
        end = started + args.seconds + TAIL_SECONDS
        await self._until(asyncio.sleep(max(0.0, end - time.monotonic())), stdin)

        self.recorder.close()
        emit(await self._done_message(transceiver))

        self.stage = "lingering after done"
        try:
            await asyncio.wait_for(asyncio.shield(stdin.closed), LINGER_SECONDS)
        except asyncio.TimeoutError:
            pass

    async def _until(self, awaitable: Any, stdin: StdinLines) -> Any:
        """Awaits `awaitable` unless the connection fails or closes, or stdin
        closes (the test gave up on us), first."""
        task = asyncio.ensure_future(awaitable)
        done, _ = await asyncio.wait(
            {task, self.failed, stdin.closed}, return_when=asyncio.FIRST_COMPLETED
        )
        if task in done:
            return task.result()
        task.cancel()
        if self.failed.done():
            raise PeerFailure(f"connection {self.failed.result()} while {self.stage}")
        raise PeerFailure(f"stdin closed while {self.stage}")

    async def _done_message(self, transceiver: Any) -> dict[str, Any]:
        dtls = transceiver.receiver.transport
        ssl = getattr(dtls, "_ssl", None)
        profile = ssl.get_selected_srtp_profile() if ssl is not None else b""
        report = await self.pc.getStats()
        stats: dict[str, Any] = {}
        for item in report.values():
            if item.type == "inbound-rtp":
                stats["inbound"] = {
                    "ssrc": item.ssrc,
                    "packetsReceived": item.packetsReceived,
                    "packetsLost": item.packetsLost,
                    "jitter": item.jitter,  # RTP timestamp units
                }
            elif item.type == "outbound-rtp":
                stats["outbound"] = {
                    "ssrc": item.ssrc,
                    "packetsSent": item.packetsSent,
                    "bytesSent": item.bytesSent,
                }
            elif item.type == "remote-inbound-rtp":  # from our receiver reports
                stats["remoteInbound"] = {
                    "packetsLost": item.packetsLost,
                    "fractionLost": item.fractionLost,
                    "jitter": item.jitter,
                    "roundTripTime": item.roundTripTime,
                }
            elif item.type == "remote-outbound-rtp":  # from our sender reports
                stats["remoteOutbound"] = {
                    "packetsSent": item.packetsSent,
                    "bytesSent": item.bytesSent,
                }
        flat = {
            "packetsReceived": stats.get("inbound", {}).get("packetsReceived", 0),
            "packetsLost": stats.get("inbound", {}).get("packetsLost", 0),
            "jitter": stats.get("inbound", {}).get("jitter", 0),
            "packetsSent": stats.get("outbound", {}).get("packetsSent", 0),
        }
        return {
            "type": "done",
            "framesReceived": self.recorder.frames,
            "sampleRate": self.recorder.sample_rate,
            "samplesReceived": self.recorder.samples,
            "srtpProfile": profile.decode() if profile else "",
            "dtlsRole": dtls._role,
            "iceRole": dtls.transport.role,
            "stats": {**flat, **stats},
        }

    async def close(self) -> None:
        self.closing = True
        if self.pc is not None:
            try:
                await asyncio.wait_for(self.pc.close(), 2.0)
            except Exception as exc:  # noqa: BLE001 - closing is best effort
                LOG.warning("closing the peer connection: %r", exc)


async def main_async(args: argparse.Namespace) -> int:
    restrict_to_loopback()
    restrict_srtp_profiles(args.srtp_profile)
    loop = asyncio.get_running_loop()
    stdin = StdinLines(loop)
    peer = Peer(args)
    status = 0
    try:
        await asyncio.wait_for(peer.run(stdin), args.timeout)
    except asyncio.TimeoutError:
        emit({"type": "error", "message": f"timeout after {args.timeout:g} s while {peer.stage}"})
        status = 1
    except PeerFailure as exc:
        emit({"type": "error", "message": str(exc)})
        status = 1
    except Exception as exc:  # noqa: BLE001 - every failure becomes an error line
        LOG.exception("unexpected failure")
        emit({"type": "error", "message": f"{type(exc).__name__}: {exc} (while {peer.stage})"})
        status = 1
    peer.recorder.close()
    await peer.close()
    return status


class ArgumentParser(argparse.ArgumentParser):
    """Bad arguments are a failure like any other: an `error` line, exit 1."""

    def error(self, message: str) -> None:  # type: ignore[override]
        self.print_usage(sys.stderr)
        emit({"type": "error", "message": f"bad arguments: {message}"})
        hard_exit(1)


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--role", choices=["offer", "answer"], required=True)
    parser.add_argument("--codec", choices=sorted(CODEC_MIME), required=True)
    parser.add_argument("--tone", type=float, required=True, help="sine frequency in Hz")
    parser.add_argument("--seconds", type=float, required=True, help="tone duration")
    parser.add_argument("--record", required=True, help="WAV file for what we receive")
    parser.add_argument("--srtp-profile", choices=sorted(SRTP_CHOICES), default="both")
    parser.add_argument("--timeout", type=float, default=30.0, help="overall limit in seconds")
    parser.add_argument("--verbose", action="store_true", help="aiortc debug logs on stderr")
    args = parser.parse_args(argv)
    if not (0 < args.tone < TONE_RATE / 2):
        parser.error("--tone must be between 0 and 24000 Hz")
    if args.seconds <= 0 or args.timeout <= 0:
        parser.error("--seconds and --timeout must be positive")
    return args


def main() -> None:
    args = parse_args(sys.argv[1:])
    logging.basicConfig(
        stream=sys.stderr,
        level=logging.DEBUG if args.verbose else logging.INFO,
        format=f"%(asctime)s aiortc-{args.role} %(name)s %(levelname)s %(message)s",
    )
    if not args.verbose:
        for noisy in ("aiortc", "aioice"):
            logging.getLogger(noisy).setLevel(logging.WARNING)
    try:
        status = asyncio.run(main_async(args))
    except KeyboardInterrupt:
        status = 1
    except Exception as exc:  # noqa: BLE001
        emit({"type": "error", "message": f"{type(exc).__name__}: {exc}"})
        status = 1
    hard_exit(status)


if __name__ == "__main__":
    main()
