#!/usr/bin/env python3
"""A Parley device written from docs/protocol.md and docs/auth.md alone.

It proves that the protocol page is enough to write a client: signaling over a
WebSocket (the `websockets` package), media with aiortc, the user token minted
here with the standard library. It places a call to a user, or waits for one and
answers or declines it, sends a tone or a WAV file, records what it hears and
prints one JSON object per line on stdout for every event. Logs go to stderr.

    parley_client.py call bob    --server http://127.0.0.1:8080 --app KEY --secret S --as alice --tone 440 --record a.wav
    parley_client.py listen      --server http://127.0.0.1:8080 --app KEY --secret S --as bob --answer --wav in.wav

Exit status: 0 when the call (or, for `listen`, each call) ended with a
`call.ended` the client expected, 1 on a failure (an `error` reply, a closed
connection, an event out of the documented order, a timeout), 2 on a bad command
line. See scripts/pyclient/README.md.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import fractions
import hashlib
import hmac
import itertools
import json
import logging
import math
import secrets
import sys
import time
import uuid
import wave
from typing import Any, Optional

import numpy
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed

LOG = logging.getLogger("parley_client")

PROTOCOL_VERSION = 1
SUBPROTOCOL = "parley.v1"
SDK_NAME = "parley-python"
SDK_VERSION = "0.1.0"
MEDIA_RATE = 48000
FRAME_SAMPLES = 960  # 20 ms at 48 kHz
TONE_AMPLITUDE = 10 ** (-10 / 20)  # -10 dBFS
# A received frame counts as audible above this RMS level (Opus comfort noise and
# concealment stay far below it).
AUDIBLE_DBFS = -40.0
# Documented order of a caller's events (protocol.md, "Call flows"), each at most once.
CALLER_ORDER = ["result", "call.media", "call.progress", "call.ringing", "call.answered",
                "call.established", "call.ended"]
CALLEE_ORDER = ["call.incoming", "call.answered", "call.established", "call.ended"]


class ClientFailure(Exception):
    """Ends the run with an `error` event and exit status 1."""


# --------------------------------------------------------------------------- output

_START = time.monotonic()


def emit(event: str, **fields: Any) -> None:
    """One JSON line on stdout: `event`, milliseconds since start `t`, then the fields."""
    line = {"event": event, "t": round((time.monotonic() - _START) * 1000)}
    line.update(fields)
    sys.stdout.write(json.dumps(line, separators=(",", ":")) + "\n")
    sys.stdout.flush()


# --------------------------------------------------------------------------- token (docs/auth.md)


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def mint_user_token(app_key: str, app_secret: str, user_id: str, lifetime: int = 600,
                    issued_at: Optional[int] = None) -> str:
    """An HS256 user token: key HMAC-SHA256(secret bytes, "YYYYMMDD" of iat), kid hkdfv1-date."""
    iat = int(time.time()) if issued_at is None else issued_at
    day = time.strftime("%Y%m%d", time.gmtime(iat))
    key = hmac.new(base64.b64decode(app_secret, validate=True), day.encode("ascii"), hashlib.sha256).digest()
    header = {"alg": "HS256", "kid": "hkdfv1-" + day, "typ": "JWT"}
    issuer = "//parley/applications/" + app_key
    claims = {"iss": issuer, "sub": issuer + "/users/" + user_id, "iat": iat, "exp": iat + lifetime,
              "nonce": secrets.token_urlsafe(16)}
    compact = lambda value: json.dumps(value, separators=(",", ":")).encode("utf-8")
    signing_input = b64url(compact(header)) + "." + b64url(compact(claims))
    signature = hmac.new(key, signing_input.encode("ascii"), hashlib.sha256).digest()
    return signing_input + "." + b64url(signature)


def signaling_url(server: str) -> str:
    """The WebSocket URL from a server URL: http -> ws, https -> wss, path /v1/ws."""
    if server.startswith("http://"):
        base = "ws://" + server[len("http://"):]
    elif server.startswith("https://"):
        base = "wss://" + server[len("https://"):]
    elif server.startswith(("ws://", "wss://")):
        base = server
    else:
        raise ValueError(f"server URL must start with http://, https://, ws:// or wss://: {server!r}")
    base = base.rstrip("/")
    return base if base.endswith("/v1/ws") else base + "/v1/ws"


def sdp_summary(sdp: str) -> dict[str, Any]:
    """What a test wants to see of the server's SDP: DTLS setup, ICE-lite, codecs, candidates."""
    lines = sdp.split("\r\n")
    value = lambda prefix: next((line[len(prefix):] for line in lines if line.startswith(prefix)), None)
    return {"setup": value("a=setup:"), "iceLite": "a=ice-lite" in lines,
            "codecs": [line.split(" ", 1)[1] for line in lines if line.startswith("a=rtpmap:")],
            "candidates": sum(1 for line in lines if line.startswith("a=candidate:"))}


# --------------------------------------------------------------------------- audio


def read_wav_mono48k(path: str) -> numpy.ndarray:
    """A 16-bit PCM WAV as mono int16 samples at 48 kHz (first channel; linear resampling)."""
    with wave.open(path, "rb") as file:
        if file.getsampwidth() != 2:
            raise ClientFailure(f"{path}: only 16-bit PCM WAV is supported")
        channels, rate = file.getnchannels(), file.getframerate()
        data = numpy.frombuffer(file.readframes(file.getnframes()), dtype="<i2")
    mono = data.reshape(-1, channels)[:, 0].astype(numpy.float64)
    if rate != MEDIA_RATE and len(mono) > 1:
        count = int(len(mono) * MEDIA_RATE / rate)
        mono = numpy.interp(numpy.arange(count) * (rate / MEDIA_RATE), numpy.arange(len(mono)), mono)
    return numpy.clip(numpy.round(mono), -32768, 32767).astype(numpy.int16)


def tone_samples(frequency: float, seconds: float) -> numpy.ndarray:
    n = numpy.arange(int(MEDIA_RATE * seconds))
    return numpy.round(numpy.sin(2 * math.pi * frequency * n / MEDIA_RATE) * TONE_AMPLITUDE * 32767).astype(numpy.int16)


def dominant_frequency(samples: numpy.ndarray, rate: int) -> Optional[float]:
    """Peak of a Hann-windowed spectrum between 50 Hz and 8 kHz, parabolically interpolated."""
    if len(samples) < 1024:
        return None
    x = samples.astype(numpy.float64) * numpy.hanning(len(samples))
    spectrum = numpy.abs(numpy.fft.rfft(x)) + 1e-12
    bin_hz = rate / len(samples)
    low, high = int(50 / bin_hz), min(int(8000 / bin_hz), len(spectrum) - 2)
    peak = low + int(numpy.argmax(spectrum[low:high]))
    a, b, c = numpy.log(spectrum[peak - 1:peak + 2])
    offset = 0.5 * (a - c) / (a - 2 * b + c) if (a - 2 * b + c) != 0 else 0.0
    return round((peak + offset) * bin_hz, 1)


def rms_dbfs(samples: numpy.ndarray) -> float:
    if len(samples) == 0:
        return -200.0
    rms = math.sqrt(float(numpy.mean(samples.astype(numpy.float64) ** 2))) / 32768
    return round(20 * math.log10(rms), 1) if rms > 0 else -200.0


def make_source_track(samples: Optional[numpy.ndarray]):
    """An aiortc audio track playing `samples` (mono 48 kHz int16) in real time, then silence."""
    import av
    from aiortc import MediaStreamTrack

    class PacedAudioTrack(MediaStreamTrack):
        kind = "audio"

        def __init__(self) -> None:
            super().__init__()
            self.samples = samples if samples is not None else numpy.zeros(0, dtype=numpy.int16)
            self.position = 0
            self.start: Optional[float] = None
            self.frames_sent = 0

        async def recv(self):
            if self.readyState != "live":
                from aiortc.mediastreams import MediaStreamError
                raise MediaStreamError
            if self.start is None:
                self.start = time.monotonic()
            due = self.start + self.frames_sent * FRAME_SAMPLES / MEDIA_RATE
            delay = due - time.monotonic()
            if delay > 0:
                await asyncio.sleep(delay)
            chunk = self.samples[self.position:self.position + FRAME_SAMPLES]
            self.position += len(chunk)
            if len(chunk) < FRAME_SAMPLES:
                chunk = numpy.concatenate([chunk, numpy.zeros(FRAME_SAMPLES - len(chunk), dtype=numpy.int16)])
            frame = av.AudioFrame.from_ndarray(chunk.reshape(1, -1), format="s16", layout="mono")
            frame.sample_rate = MEDIA_RATE
            frame.pts = self.frames_sent * FRAME_SAMPLES
            frame.time_base = fractions.Fraction(1, MEDIA_RATE)
            self.frames_sent += 1
            return frame

    return PacedAudioTrack()


class Recorder:
    """Reads the remote track; keeps mono int16 samples and when audio first became audible."""

    def __init__(self) -> None:
        self.chunks: list[numpy.ndarray] = []
        self.rate = MEDIA_RATE
        self.frames = 0
        self.first_audible: Optional[float] = None
        self.task: Optional[asyncio.Task] = None

    def start(self, track) -> None:
        self.task = asyncio.ensure_future(self._run(track))

    async def _run(self, track) -> None:
        from aiortc.mediastreams import MediaStreamError
        try:
            while True:
                frame = await track.recv()
                data = frame.to_ndarray()
                channels = len(frame.layout.channels)
                # Packed formats come as one row of interleaved samples: keep the first channel.
                mono = data.reshape(-1)[::channels] if frame.format.is_packed else data[0]
                mono = mono.astype(numpy.int16)
                self.rate = frame.sample_rate
                self.chunks.append(mono)
                self.frames += 1
                if self.first_audible is None and rms_dbfs(mono) > AUDIBLE_DBFS:
                    self.first_audible = time.monotonic()
        except (MediaStreamError, asyncio.CancelledError):
            pass

    async def stop(self) -> None:
        if self.task is not None:
            self.task.cancel()
            try:
                await self.task
            except asyncio.CancelledError:
                pass

    def samples(self) -> numpy.ndarray:
        return numpy.concatenate(self.chunks) if self.chunks else numpy.zeros(0, dtype=numpy.int16)

    def report(self, path: Optional[str], established: Optional[float]) -> dict[str, Any]:
        samples = self.samples()
        if path:
            with wave.open(path, "wb") as file:
                file.setnchannels(1)
                file.setsampwidth(2)
                file.setframerate(self.rate)
                file.writeframes(samples.astype("<i2").tobytes())
        loud = [c for c in self.chunks if rms_dbfs(c) > AUDIBLE_DBFS]
        audible = numpy.concatenate(loud) if loud else numpy.zeros(0, dtype=numpy.int16)
        first_ms = None
        if self.first_audible is not None and established is not None:
            first_ms = round((self.first_audible - established) * 1000)
        return {"path": path, "sampleRate": self.rate, "frames": self.frames, "samples": int(len(samples)),
                "audibleFrames": len(loud),
                "firstAudibleMsAfterEstablished": first_ms,
                "dominantHz": dominant_frequency(audible[-MEDIA_RATE * 2:], self.rate) if len(audible) else None,
                "levelDbfs": rms_dbfs(audible)}


# --------------------------------------------------------------------------- signaling


class Signaling:
    """One WebSocket to the server: requests with ids and their replies, events in a queue."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.socket: Optional[ClientConnection] = None
        self.ids = itertools.count(1)
        self.pending: dict[str, asyncio.Future] = {}
        self.events: asyncio.Queue = asyncio.Queue()
        self.tasks: list[asyncio.Task] = []
        self.session: dict[str, Any] = {}
        self.close_code: Optional[int] = None
        self.credentials: tuple = ()
        self.dropping = False
        self.away_seconds = 0.0

    def ice_servers(self) -> list:
        """The STUN/TURN servers `hello.ok.media.iceServers` names (docs/protocol.md); none: host candidates only."""
        from aiortc import RTCIceServer
        media = self.session.get("media") or {}
        return [RTCIceServer(urls=server["urls"], username=server.get("username"), credential=server.get("credential"))
                for server in media.get("iceServers") or []]

    async def open(self, app_key: str, token_source, device_id: str,
                   resume_session: Optional[str] = None) -> dict[str, Any]:
        """Connects and sends `hello`; `token_source()` gives a fresh token (each nonce works once)."""
        self.credentials = (app_key, token_source, device_id)
        # `websockets` offers the subprotocol and fails the handshake if the server selects another.
        self.socket = await connect(self.url, subprotocols=[SUBPROTOCOL], open_timeout=10,
                                    ping_interval=None, max_size=65536)
        emit("connected", url=self.url, subprotocol=self.socket.subprotocol)
        self.tasks = [asyncio.ensure_future(self._read(self.socket))]
        reply = await self.request("hello", appKey=app_key, token=token_source(), deviceId=device_id,
                                   sdk={"name": SDK_NAME, "version": SDK_VERSION,
                                        "platform": f"Python {sys.version_info.major}.{sys.version_info.minor} aiortc"},
                                   capabilities=["audio"], resumeSessionId=resume_session)
        if reply["type"] != "hello.ok":
            raise ClientFailure(f"hello refused: {reply}")
        self.session = reply
        emit("hello.ok", sessionId=reply["sessionId"], userId=reply["userId"], heartbeatMs=reply["heartbeatMs"],
             serverVersion=reply.get("serverVersion"), media=reply.get("media"), resumed=reply.get("resumed", False))
        self.tasks.append(asyncio.ensure_future(self._heartbeat(reply["heartbeatMs"] / 1000)))
        return reply

    async def drop_and_resume(self, away: float = 0.0) -> None:
        """Drops the TCP connection without a close frame, as a network change would, then
        reconnects with `resumeSessionId` (protocol.md, "Reconnecting")."""
        previous = self.session["sessionId"]
        self.dropping = True
        for task in self.tasks[1:]:
            task.cancel()
        self.socket.transport.abort()
        try:
            await asyncio.wait_for(self.tasks[0], 5)
        except (asyncio.TimeoutError, asyncio.CancelledError):
            pass
        self.dropping = False
        emit("dropped", sessionId=previous)
        await asyncio.sleep(away)
        app_key, token_source, device_id = self.credentials
        reply = await self.open(app_key, token_source, device_id, resume_session=previous)
        if not reply.get("resumed", False) or reply["sessionId"] != previous:
            raise ClientFailure(f"session {previous} not resumed: {reply}")
        emit("resumed", sessionId=previous)

    async def request(self, type_: str, timeout: float = 10, **members: Any) -> dict[str, Any]:
        """Sends a request and returns its reply; an `error` reply raises ClientFailure."""
        request_id = str(next(self.ids))
        frame = {"v": PROTOCOL_VERSION, "type": type_, "id": request_id}
        frame.update({k: v for k, v in members.items() if v is not None})
        future = asyncio.get_running_loop().create_future()
        self.pending[request_id] = future
        LOG.debug("send %s", frame)
        try:
            await self.socket.send(json.dumps(frame, separators=(",", ":")))
            reply = await asyncio.wait_for(future, timeout)
        except ConnectionClosed as closed:
            raise ClientFailure(f"connection closed while sending {type_}: {closed}")
        except asyncio.TimeoutError:
            raise ClientFailure(f"no reply to {type_} (id {request_id}) within {timeout} s")
        finally:
            self.pending.pop(request_id, None)
        if reply["type"] == "error":
            emit("error.reply", request=type_, code=reply.get("code"), message=reply.get("message"),
                 field=reply.get("field"))
            # protocol.md, Error codes: a refused hello is followed by the server's close
            # (4001, 4005, 4006); close() waits for it instead of racing it with our 1000.
            if type_ == "hello":
                self.server_close_expected = True
            raise ClientFailure(f"{type_} refused: {reply.get('code')}: {reply.get('message')}")
        return reply

    async def _read(self, socket: ClientConnection) -> None:
        try:
            async for text in socket:
                if isinstance(text, bytes):
                    raise ClientFailure("binary frame from the server")
                frame = json.loads(text)
                LOG.debug("recv %s", frame)
                if frame.get("v") != PROTOCOL_VERSION:
                    emit("protocol.violation", reason="frame without v 1", frame=frame)
                reply_to = frame.get("re")
                if reply_to is not None:
                    future = self.pending.get(reply_to)
                    if future is not None and not future.done():
                        future.set_result(frame)
                    elif frame.get("type") != "pong":
                        emit("protocol.violation", reason="reply to no request in flight", frame=frame)
                    # A reply is also put in the queue, so the order of replies and events shows.
                    if frame.get("type") == "result":
                        await self.events.put(frame)
                elif frame.get("type") == "error":
                    emit("error.frame", frame=frame)
                else:
                    await self.events.put(frame)
        except ConnectionClosed:
            pass
        finally:
            self.close_code = socket.close_code
            emit("closed", code=self.close_code, reason=socket.close_reason or None)
            for future in self.pending.values():
                if not future.done():
                    future.set_exception(ConnectionClosed(None, None))
            if not self.dropping:
                await self.events.put({"type": "closed", "code": self.close_code})

    async def _heartbeat(self, interval: float) -> None:
        while True:
            await asyncio.sleep(interval)
            try:
                await self.request("ping")
            except ClientFailure as failure:
                LOG.warning("ping failed: %s", failure)
                return

    async def poll_event(self, timeout: float) -> Optional[dict[str, Any]]:
        """The next event (or `result`, or `closed`), or None after `timeout` seconds."""
        try:
            return await asyncio.wait_for(self.events.get(), max(timeout, 0.001))
        except asyncio.TimeoutError:
            return None

    async def close(self) -> None:
        """Closes with 1000 and lets the reader see the server's close frame."""
        for task in self.tasks[1:]:
            task.cancel()
        if getattr(self, "server_close_expected", False) and self.tasks:
            try:
                await asyncio.wait_for(asyncio.shield(self.tasks[0]), 3)
            except (asyncio.TimeoutError, asyncio.CancelledError):
                pass
        if self.socket is not None:
            await self.socket.close(1000)
        if self.tasks:
            try:
                await asyncio.wait_for(self.tasks[0], 5)
            except (asyncio.TimeoutError, asyncio.CancelledError):
                pass


# --------------------------------------------------------------------------- calls


class Call:
    """One call's media (an aiortc peer connection) and the order of its events."""

    def __init__(self, args: argparse.Namespace, call_id: str, order: list[str], ice_servers: list) -> None:
        from aiortc import RTCConfiguration, RTCPeerConnection
        self.args = args
        self.call_id = call_id
        self.order = order
        self.seen: list[str] = []
        # The server's list, even when empty: aiortc given no list at all adds a public
        # STUN server (stun.l.google.com), which a test on loopback must never reach.
        self.pc = RTCPeerConnection(RTCConfiguration(iceServers=ice_servers))
        self.recorder = Recorder()
        self.established: Optional[float] = None
        source = None
        if args.wav:
            source = args.wav_samples
        elif args.tone:
            source = tone_samples(args.tone, args.tone_seconds)
        self.track = make_source_track(source)

        @self.pc.on("track")
        def on_track(track) -> None:
            if track.kind == "audio":
                self.recorder.start(track)

        @self.pc.on("connectionstatechange")
        async def on_state() -> None:
            fields: dict[str, Any] = {}
            if self.pc.connectionState == "connected":
                # aiortc keeps the negotiated DTLS role in a private attribute; report it if there.
                transceivers = self.pc.getTransceivers()
                transport = transceivers[0].receiver.transport if transceivers else None
                fields["dtlsRole"] = getattr(transport, "_role", None)
            emit("media.state", callId=call_id, state=self.pc.connectionState, **fields)

    def add_track(self) -> None:
        """Our track on the one audio transceiver; Opus only unless --all-codecs."""
        from aiortc import RTCRtpSender
        transceivers = self.pc.getTransceivers()
        if transceivers:
            transceiver = transceivers[0]
            transceiver.sender.replaceTrack(self.track)
            transceiver.direction = "sendrecv"
        else:
            transceiver = self.pc.addTransceiver(self.track, direction="sendrecv")
        if not self.args.all_codecs:
            codecs = RTCRtpSender.getCapabilities("audio").codecs
            transceiver.setCodecPreferences([c for c in codecs if c.mimeType.lower() == "audio/opus"])

    def note(self, type_: str) -> None:
        """Checks the documented order: each type at most once, never after a later one."""
        if type_ not in self.order:
            return
        if type_ in self.seen:
            emit("protocol.violation", callId=self.call_id, reason=f"{type_} twice")
        elif self.seen and self.order.index(type_) < self.order.index(self.seen[-1]):
            emit("protocol.violation", callId=self.call_id, reason=f"{type_} after {self.seen[-1]}")
        self.seen.append(type_)

    async def finish(self, ended: dict[str, Any]) -> dict[str, Any]:
        await asyncio.sleep(0)
        await self.recorder.stop()
        report = self.recorder.report(self.args.record, self.established)
        report["framesSent"] = self.track.frames_sent
        emit("recording", callId=self.call_id, **report)
        await self.pc.close()
        return report


def ended_fields(frame: dict[str, Any]) -> dict[str, Any]:
    fields = {"callId": frame.get("callId"), "cause": frame.get("cause"), "details": frame.get("details")}
    if frame.get("error") is not None:
        fields["error"] = frame["error"]
    return fields


class Timers:
    """Actions due at monotonic times (hang up, drop the connection), and the run's deadline."""

    def __init__(self, timeout: float) -> None:
        self.deadline = time.monotonic() + timeout
        self.due: dict[str, float] = {}

    def after(self, action: str, seconds: Optional[float]) -> None:
        if seconds is not None:
            self.due[action] = time.monotonic() + seconds

    def wait(self) -> float:
        return max(0.0, min([self.deadline] + list(self.due.values())) - time.monotonic())

    def pop_due(self) -> list[str]:
        now = time.monotonic()
        actions = [action for action, at in self.due.items() if at <= now]
        for action in actions:
            del self.due[action]
        if not actions and now >= self.deadline:
            raise ClientFailure("timed out waiting for the call's events")
        return actions


async def perform(action: str, call: Call, signaling: Signaling) -> None:
    if action == "hangup":
        emit("hangup", callId=call.call_id)
        await signaling.request("call.hangup", callId=call.call_id)
    elif action == "drop":
        await signaling.drop_and_resume(signaling.away_seconds)


async def place_call(args: argparse.Namespace, signaling: Signaling) -> str:
    """Caller: offer, call.start, the server's answer in call.media, then events until call.ended."""
    from aiortc import RTCSessionDescription
    call_id = str(uuid.uuid4())
    call = Call(args, call_id, CALLER_ORDER, signaling.ice_servers())
    call.add_track()
    await call.pc.setLocalDescription(await call.pc.createOffer())  # aiortc gathers before returning
    headers = dict(pair.split("=", 1) for pair in args.header) if args.header else None
    reply = await signaling.request("call.start", callId=call_id, to={"kind": args.to_kind, "address": args.callee},
                                    headers=headers, sdp=call.pc.localDescription.sdp)
    emit("call.start.result", callId=call_id, re=reply["re"])
    timers = Timers(args.timeout)
    timers.after("hangup", args.cancel_after)
    while True:
        frame = await signaling.poll_event(timers.wait())
        if frame is None:
            for action in timers.pop_due():
                await perform(action, call, signaling)
            continue
        type_ = frame.get("type")
        if type_ == "closed":
            raise ClientFailure(f"connection closed ({frame.get('code')}) during the call")
        if frame.get("callId") not in (None, call_id):
            emit("ignored", frame=frame)
            continue
        if type_ == "result":
            # Only call.start's result is part of the documented order; later ones answer
            # our call.hangup.
            if "result" not in call.seen:
                call.note(type_)
            continue
        call.note(type_)
        if type_ == "call.media":
            emit("call.media", callId=call_id, sdp=sdp_summary(frame["sdp"]))
            await call.pc.setRemoteDescription(RTCSessionDescription(sdp=frame["sdp"], type="answer"))
        elif type_ == "call.ended":
            emit("call.ended", **ended_fields(frame))
            report = await call.finish(frame)
            emit("done", callId=call_id, cause=frame.get("cause"), seen=call.seen, recording=report)
            return frame.get("cause")
        else:
            emit(type_, callId=call_id, time=frame.get("time"))
            if type_ == "call.established":
                call.established = time.monotonic()
                timers.after("hangup", args.hangup_after)
                timers.after("drop", args.drop_after)


async def receive_calls(args: argparse.Namespace, signaling: Signaling) -> list[str]:
    """Callee: for each call.incoming, call.ack, then answer, decline or let it ring."""
    from aiortc import RTCSessionDescription
    causes = []
    call: Optional[Call] = None
    timers = Timers(args.timeout)
    while len(causes) < args.calls:
        frame = await signaling.poll_event(timers.wait())
        if frame is None:
            for action in timers.pop_due():
                if call is not None:
                    await perform(action, call, signaling)
            continue
        type_ = frame.get("type")
        if type_ == "closed":
            raise ClientFailure(f"connection closed ({frame.get('code')}) while listening")
        if type_ == "result":
            continue
        if type_ == "call.incoming":
            if call is not None:
                emit("ignored", reason="a second call while one is live", frame={"callId": frame.get("callId")})
                continue
            call = Call(args, frame["callId"], CALLEE_ORDER, signaling.ice_servers())
            call.note(type_)
            emit("call.incoming", callId=call.call_id, **{"from": frame.get("from"), "headers": frame.get("headers"),
                                                        "video": frame.get("video"), "time": frame.get("time"),
                                                        "sdp": sdp_summary(frame["sdp"])})
            await signaling.request("call.ack", callId=call.call_id)
            emit("acked", callId=call.call_id)
            if args.ring_seconds:
                await asyncio.sleep(args.ring_seconds)
            if args.on_incoming == "answer":
                await call.pc.setRemoteDescription(RTCSessionDescription(sdp=frame["sdp"], type="offer"))
                call.add_track()
                answer = await call.pc.createAnswer()
                if args.answer_setup != "active":
                    # aiortc answers active; another role shows what the server does with it.
                    answer = RTCSessionDescription(sdp=answer.sdp.replace("a=setup:active", "a=setup:" + args.answer_setup),
                                                   type="answer")
                await call.pc.setLocalDescription(answer)
                await signaling.request("call.answer", callId=call.call_id, sdp=call.pc.localDescription.sdp)
                emit("answer.sent", callId=call.call_id)
            elif args.on_incoming == "decline":
                await signaling.request("call.decline", callId=call.call_id)
                emit("declined", callId=call.call_id)
            elif args.on_incoming == "hangup":
                await signaling.request("call.hangup", callId=call.call_id)
                emit("hangup", callId=call.call_id)
            continue
        if call is None or frame.get("callId") != call.call_id:
            emit("ignored", frame=frame)
            continue
        call.note(type_)
        if type_ == "call.ended":
            emit("call.ended", **ended_fields(frame))
            report = await call.finish(frame)
            emit("done", callId=call.call_id, cause=frame.get("cause"), seen=call.seen, recording=report)
            causes.append(frame.get("cause"))
            call = None
            timers.due.clear()
        else:
            emit(type_, callId=call.call_id, time=frame.get("time"))
            if type_ == "call.established":
                call.established = time.monotonic()
                timers.after("hangup", args.hangup_after)
                timers.after("drop", args.drop_after)
    return causes


# --------------------------------------------------------------------------- main


def restrict_ice_to_loopback() -> None:
    """aioice leaves 127.0.0.1 out of its host candidates; for loopback tests, use only it."""
    import aioice.ice
    aioice.ice.get_host_addresses = lambda use_ipv4, use_ipv6: ["127.0.0.1"]


def parse_arguments(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description="A Parley client (docs/protocol.md) in Python with aiortc.")
    parser.add_argument("mode", choices=["call", "listen"])
    parser.add_argument("callee", nargs="?", help="call: the address to call (a user id)")
    parser.add_argument("--server", required=True, help="server URL, e.g. http://127.0.0.1:8080")
    parser.add_argument("--app", required=True, help="application key")
    parser.add_argument("--secret", help="application secret (the client mints its own token)")
    parser.add_argument("--token", help="a user token minted elsewhere, instead of --secret")
    parser.add_argument("--as", dest="user", help="user id (with --secret)")
    parser.add_argument("--device-id", help="device id (default: python-USER-random)")
    parser.add_argument("--to-kind", default="user", choices=["user", "phone", "sip", "conference"])
    parser.add_argument("--header", action="append", help="call: a custom header NAME=VALUE (repeatable)")
    source = parser.add_mutually_exclusive_group()
    source.add_argument("--tone", type=float, help="send a sine of this frequency (Hz), -10 dBFS")
    source.add_argument("--wav", help="send this 16-bit PCM WAV file once, then silence")
    parser.add_argument("--tone-seconds", type=float, default=30.0, help="how long the tone lasts (default 30)")
    parser.add_argument("--record", help="write what is heard to this WAV file (mono 16-bit)")
    parser.add_argument("--hangup-after", type=float, help="hang up this many seconds after call.established")
    parser.add_argument("--drop-after", type=float,
                        help="drop the connection this many seconds after call.established, then resume")
    parser.add_argument("--away-seconds", type=float, default=0.0,
                        help="with --drop-after: stay disconnected this long before resuming")
    parser.add_argument("--cancel-after", type=float, help="call: hang up this many seconds after call.start")
    answer = parser.add_mutually_exclusive_group()
    answer.add_argument("--answer", dest="on_incoming", action="store_const", const="answer")
    answer.add_argument("--decline", dest="on_incoming", action="store_const", const="decline")
    answer.add_argument("--hangup", dest="on_incoming", action="store_const", const="hangup",
                        help="listen: refuse with call.hangup before answering")
    answer.add_argument("--ignore", dest="on_incoming", action="store_const", const="ignore",
                        help="listen: acknowledge, then let it ring")
    parser.add_argument("--answer-setup", default="active", choices=["active", "passive"],
                        help="listen: the a=setup of our answer (protocol.md asks for active)")
    parser.add_argument("--ring-seconds", type=float, default=0.0, help="listen: ring this long before acting")
    parser.add_argument("--calls", type=int, default=1, help="listen: exit after this many calls ended")
    parser.add_argument("--expect-cause", help="exit 1 unless every call ends with this cause")
    parser.add_argument("--timeout", type=float, default=30.0, help="give up after this many seconds")
    parser.add_argument("--all-codecs", action="store_true",
                        help="offer or answer every codec aiortc has (Opus, PCMU, PCMA), not only Opus")
    parser.add_argument("--loopback", action="store_true", help="ICE on 127.0.0.1 only (tests on one machine)")
    parser.add_argument("--verbose", action="store_true")
    args = parser.parse_args(argv)
    if args.mode == "call" and not args.callee:
        parser.error("call needs the callee's address")
    if args.token is None and (args.secret is None or args.user is None):
        parser.error("give --token, or --secret and --as to mint one")
    if args.on_incoming is None:
        args.on_incoming = "answer"
    if args.secret is not None:
        try:
            if len(base64.b64decode(args.secret, validate=True)) == 0:
                raise ValueError("empty")
        except ValueError:
            parser.error("--secret is not standard Base64 (the application secret as parleyd prints it)")
    args.wav_samples = None
    if args.wav:
        try:
            args.wav_samples = read_wav_mono48k(args.wav)
        except (OSError, EOFError, wave.Error, ClientFailure) as failure:
            parser.error(f"--wav {args.wav}: {failure}")
    is_user_id = lambda value: 1 <= len(value.encode()) <= 255 and all(
        c.isascii() and (c.isalnum() or c in "-_=") for c in value)
    if args.mode == "call" and args.to_kind == "user" and not is_user_id(args.callee):
        parser.error(f"callee {args.callee!r}: a user id is 1-255 bytes of A-Z a-z 0-9 - _ =")
    if args.user is not None and not is_user_id(args.user):
        parser.error(f"--as {args.user!r}: a user id is 1-255 bytes of A-Z a-z 0-9 - _ =")
    try:
        args.url = signaling_url(args.server)
    except ValueError as failure:
        parser.error(str(failure))
    return args


async def run(args: argparse.Namespace) -> int:
    if args.token:
        token_source = lambda: args.token
    else:
        token_source = lambda: mint_user_token(args.app, args.secret, args.user)
    device_id = args.device_id or f"python-{args.user or 'device'}-{secrets.token_hex(4)}"
    signaling = Signaling(args.url)
    signaling.away_seconds = args.away_seconds
    try:
        await signaling.open(args.app, token_source, device_id)
        if args.mode == "call":
            causes = [await place_call(args, signaling)]
        else:
            emit("listening", userId=signaling.session.get("userId"))
            causes = await receive_calls(args, signaling)
    except ClientFailure as failure:
        emit("error", message=str(failure))
        return 1
    except (OSError, ConnectionClosed) as failure:
        emit("error", message=f"connection failed: {failure}")
        return 1
    except Exception as failure:  # a bug here or in aiortc: still one clean error line
        LOG.exception("unexpected failure")
        emit("error", message=f"{type(failure).__name__}: {failure}")
        return 1
    finally:
        await signaling.close()
    if args.expect_cause and any(cause != args.expect_cause for cause in causes):
        emit("error", message=f"expected cause {args.expect_cause}, got {causes}")
        return 1
    return 0


def main() -> None:
    args = parse_arguments(sys.argv[1:])
    logging.basicConfig(stream=sys.stderr, level=logging.DEBUG if args.verbose else logging.WARNING,
                        format="%(asctime)s %(name)s %(levelname)s %(message)s")
    if args.loopback:
        restrict_ice_to_loopback()
    try:
        status = asyncio.run(asyncio.wait_for(run(args), args.timeout + 15))
    except asyncio.TimeoutError:
        emit("error", message="overall timeout")
        status = 1
    sys.exit(status)


if __name__ == "__main__":
    main()
