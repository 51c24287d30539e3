#!/usr/bin/env python3
"""Self-check of aiortc_peer.py: two copies talk to each other over loopback.

One copy offers, the other answers; this script relays the SDP between them the
way a Swift interop test would, then checks each recording holds the other
copy's tone and that enough frames arrived. Every run is bounded in time.

    python3 scripts/interop/selfcheck_aiortc.py [--seconds 5] [--keep DIR]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import os
import re
import sys
import tempfile
import time
import wave
from dataclasses import dataclass, field
from typing import Any, Callable, Optional

PEER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "aiortc_peer.py")
OFFER_TONE = 440.0
ANSWER_TONE = 1000.0
TONE_TOLERANCE_HZ = 10.0
FRAME_RATIO = 0.95  # of seconds * 50 frames


@dataclass
class Case:
    codec: str
    offer_profile: str
    answer_profile: str
    expect_profile: Optional[str]  # None: the connection must fail
    # Variants of what the Swift leg may send, made by editing the relayed SDP.
    variant: str = ""
    edit_offer: Optional[Callable[[str], str]] = None
    edit_answer: Optional[Callable[[str], str]] = None
    # (offerer, answerer) DTLS roles; default: the answerer is the client.
    dtls_roles: tuple[str, str] = ("server", "client")
    # (offerer, answerer) ICE roles, when the case pins them.
    ice_roles: Optional[tuple[str, str]] = None

    @property
    def name(self) -> str:
        base = f"{self.codec}/{self.offer_profile}-{self.answer_profile}"
        return f"{base}/{self.variant}" if self.variant else base


@dataclass
class PeerRun:
    role: str
    tone: float
    record: str
    messages: list[dict[str, Any]] = field(default_factory=list)
    status: Optional[int] = None
    stderr: str = ""

    def first(self, kind: str) -> Optional[dict[str, Any]]:
        return next((m for m in self.messages if m.get("type") == kind), None)


class CheckFailed(Exception):
    pass


async def start_peer(run: PeerRun, case: Case, profile: str, seconds: float, timeout: float):
    return await asyncio.create_subprocess_exec(
        sys.executable, PEER,
        "--role", run.role, "--codec", case.codec, "--tone", str(run.tone),
        "--seconds", str(seconds), "--record", run.record,
        "--srtp-profile", profile, "--timeout", str(timeout),
        stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )


async def next_message(proc, run: PeerRun) -> Optional[dict[str, Any]]:
    line = await proc.stdout.readline()
    if not line:
        return None
    try:
        message = json.loads(line)
    except json.JSONDecodeError as exc:
        raise CheckFailed(f"{run.role}: stdout line is not JSON: {line!r}") from exc
    run.messages.append(message)
    return message


def send(proc, message: dict[str, Any]) -> None:
    proc.stdin.write((json.dumps(message) + "\n").encode())


async def run_case(case: Case, seconds: float, directory: str) -> tuple[PeerRun, PeerRun]:
    timeout = seconds + 15
    offerer = PeerRun("offer", OFFER_TONE, os.path.join(directory, f"{case.codec}-{case.offer_profile}-{case.answer_profile}-offer.wav"))
    answerer = PeerRun("answer", ANSWER_TONE, os.path.join(directory, f"{case.codec}-{case.offer_profile}-{case.answer_profile}-answer.wav"))
    a = await start_peer(offerer, case, case.offer_profile, seconds, timeout)
    b = await start_peer(answerer, case, case.answer_profile, seconds, timeout)
    stderr_tasks = [asyncio.ensure_future(p.stderr.read()) for p in (a, b)]

    async def relay() -> None:
        for proc, run in ((a, offerer), (b, answerer)):
            ready = await next_message(proc, run)
            if ready != {"type": "ready", "address": "127.0.0.1"}:
                raise CheckFailed(f"{run.role}: first line {ready!r}")
        offer = await next_message(a, offerer)
        if not offer or offer.get("type") != "offer":
            raise CheckFailed(f"offerer: expected offer, got {offer!r}")
        if case.edit_offer:
            offer = {**offer, "sdp": case.edit_offer(offer["sdp"])}
        send(b, offer)
        answer = await next_message(b, answerer)
        if not answer or answer.get("type") != "answer":
            raise CheckFailed(f"answerer: expected answer, got {answer!r}")
        if case.edit_answer:
            answer = {**answer, "sdp": case.edit_answer(answer["sdp"])}
        send(a, answer)

        async def until_end(proc, run: PeerRun) -> None:
            while True:
                message = await next_message(proc, run)
                if message is None or message.get("type") in ("done", "error"):
                    return

        await asyncio.gather(until_end(a, offerer), until_end(b, answerer))

    try:
        await asyncio.wait_for(relay(), timeout + 5)
    finally:
        for proc in (a, b):
            if proc.stdin and not proc.stdin.is_closing():
                proc.stdin.close()
        for proc, run in ((a, offerer), (b, answerer)):
            try:
                run.status = await asyncio.wait_for(proc.wait(), 10)
            except asyncio.TimeoutError:
                proc.kill()
                run.status = await proc.wait()
            # Lines after done/error (there should be none).
            rest = await proc.stdout.read()
            for line in rest.splitlines():
                run.messages.append(json.loads(line))
        for task, run in zip(stderr_tasks, (offerer, answerer)):
            run.stderr = (await task).decode(errors="replace")
    return offerer, answerer


# --------------------------------------------------------------------------- checks


def check_sdp(role: str, sdp: str, codec: str) -> None:
    candidates = re.findall(r"^a=candidate:\S+ \d+ \S+ \d+ (\S+) ", sdp, re.MULTILINE)
    if not candidates or any(c != "127.0.0.1" for c in candidates):
        raise CheckFailed(f"{role} SDP candidates {candidates}")
    for address in re.findall(r"^c=IN IP\d (\S+)", sdp, re.MULTILINE):
        if address != "127.0.0.1":
            raise CheckFailed(f"{role} SDP c-line {address}")
    for address in re.findall(r"IN IP4 (\S+)", sdp):
        if address not in ("127.0.0.1", "0.0.0.0"):
            raise CheckFailed(f"{role} SDP leaks address {address}")
    if "IN IP6" in sdp:
        raise CheckFailed(f"{role} SDP has an IPv6 address")
    names = {n.lower() for n in re.findall(r"^a=rtpmap:\d+ ([^/]+)/", sdp, re.MULTILINE)}
    if names - {"telephone-event"} != {codec}:
        raise CheckFailed(f"{role} SDP codecs {sorted(names)}, wanted only {codec}")


def read_wav(path: str) -> tuple[int, list[int]]:
    with wave.open(path, "rb") as wav:
        if wav.getnchannels() != 1 or wav.getsampwidth() != 2:
            raise CheckFailed(f"{path}: not 16-bit mono")
        rate = wav.getframerate()
        data = wav.readframes(wav.getnframes())
    import array

    pcm = array.array("h")
    pcm.frombytes(data)
    if sys.byteorder != "little":
        pcm.byteswap()
    return rate, pcm.tolist()


def dominant_frequency(rate: int, samples: list[int]) -> float:
    try:
        import numpy
    except ImportError:
        return zero_crossing_frequency(rate, samples)
    signal = numpy.asarray(samples, dtype=numpy.float64)
    signal = signal * numpy.hanning(len(signal))
    spectrum = numpy.abs(numpy.fft.rfft(signal))
    spectrum[0] = 0
    peak = int(numpy.argmax(spectrum))
    # Parabolic interpolation around the peak bin.
    if 0 < peak < len(spectrum) - 1:
        l, c, r = spectrum[peak - 1], spectrum[peak], spectrum[peak + 1]
        denom = l - 2 * c + r
        offset = 0.5 * (l - r) / denom if denom else 0.0
    else:
        offset = 0.0
    return (peak + offset) * rate / len(signal)


def zero_crossing_frequency(rate: int, samples: list[int]) -> float:
    # Fallback without numpy: rising zero crossings with a small hysteresis.
    if not samples:
        return 0.0
    threshold = max(64, int(0.1 * max(abs(s) for s in samples)))
    crossings, armed = [], False
    for i, s in enumerate(samples):
        if s < -threshold:
            armed = True
        elif armed and s > threshold:
            crossings.append(i)
            armed = False
    if len(crossings) < 2:
        return 0.0
    return (len(crossings) - 1) * rate / (crossings[-1] - crossings[0])


def check_recording(run: PeerRun, other_tone: float, seconds: float) -> dict[str, Any]:
    done = run.first("done")
    assert done is not None
    rate, samples = read_wav(run.record)
    if rate != done["sampleRate"]:
        raise CheckFailed(f"{run.role}: WAV rate {rate} != done.sampleRate {done['sampleRate']}")
    if len(samples) != done["samplesReceived"]:
        raise CheckFailed(f"{run.role}: WAV has {len(samples)} samples, done says {done['samplesReceived']}")
    # The middle of the tone: skip codec start-up and the silent tail.
    window = samples[int(0.5 * rate): int((seconds - 0.5) * rate)]
    if len(window) < rate:
        raise CheckFailed(f"{run.role}: only {len(samples)} samples recorded")
    frequency = dominant_frequency(rate, window)
    if abs(frequency - other_tone) > TONE_TOLERANCE_HZ:
        raise CheckFailed(f"{run.role}: dominant frequency {frequency:.1f} Hz, wanted {other_tone:g}")
    rms = math.sqrt(sum(s * s for s in window) / len(window)) / 32768
    level_db = 20 * math.log10(rms * math.sqrt(2)) if rms > 0 else -200.0  # sine peak level
    if level_db < -16 or level_db > -6:
        raise CheckFailed(f"{run.role}: tone level {level_db:.1f} dBFS, wanted about -10")
    wanted_frames = FRAME_RATIO * seconds * 50
    if done["framesReceived"] < wanted_frames:
        raise CheckFailed(f"{run.role}: {done['framesReceived']} frames, wanted >= {wanted_frames:g}")
    return {"frequency": round(frequency, 1), "levelDb": round(level_db, 1)}


def check_case(case: Case, offerer: PeerRun, answerer: PeerRun, seconds: float) -> str:
    for run in (offerer, answerer):
        types = [m.get("type") for m in run.messages]
        if case.expect_profile is None:
            if run.status != 1 or types[-1:] != ["error"]:
                raise CheckFailed(f"{run.role}: expected failure, got status {run.status}, messages {types}")
            continue
        if run.status != 0:
            raise CheckFailed(f"{run.role}: exit status {run.status}, messages {run.messages}\n{run.stderr[-3000:]}")
        wanted = ["ready", run.role, "state", "done"]
        if types != wanted or run.messages[2] != {"type": "state", "state": "connected"}:
            raise CheckFailed(f"{run.role}: messages {types}, wanted {wanted}")
    if case.expect_profile is None:
        return "failed as expected: " + "; ".join(r.first("error")["message"] for r in (offerer, answerer))

    check_sdp("offer", offerer.first("offer")["sdp"], case.codec)
    check_sdp("answer", answerer.first("answer")["sdp"], case.codec)
    done_o, done_a = offerer.first("done"), answerer.first("done")
    for run, done in ((offerer, done_o), (answerer, done_a)):
        if done["srtpProfile"] != case.expect_profile:
            raise CheckFailed(f"{run.role}: srtpProfile {done['srtpProfile']}, wanted {case.expect_profile}")
    if (done_o["dtlsRole"], done_a["dtlsRole"]) != case.dtls_roles:
        raise CheckFailed(f"DTLS roles {done_o['dtlsRole']} / {done_a['dtlsRole']}, wanted {case.dtls_roles}")
    if case.ice_roles and (done_o["iceRole"], done_a["iceRole"]) != case.ice_roles:
        raise CheckFailed(f"ICE roles {done_o['iceRole']} / {done_a['iceRole']}, wanted {case.ice_roles}")
    heard_o = check_recording(offerer, ANSWER_TONE, seconds)
    heard_a = check_recording(answerer, OFFER_TONE, seconds)
    return (
        f"{case.expect_profile}; offerer dtls {done_o['dtlsRole']} ice {done_o['iceRole']} heard {heard_o['frequency']} Hz "
        f"{heard_o['levelDb']} dBFS, {done_o['framesReceived']} frames @ {done_o['sampleRate']} Hz, "
        f"stats {json.dumps({k: done_o['stats'].get(k) for k in ('packetsReceived', 'packetsLost', 'jitter', 'packetsSent')})}; "
        f"answerer dtls {done_a['dtlsRole']} ice {done_a['iceRole']} heard {heard_a['frequency']} Hz {heard_a['levelDb']} dBFS, "
        f"{done_a['framesReceived']} frames"
    )


GCM = "SRTP_AEAD_AES_128_GCM"
CM = "SRTP_AES128_CM_SHA1_80"


def cases() -> list[Case]:
    out = []
    for codec in ("opus", "pcmu"):
        out.append(Case(codec, "gcm", "gcm", GCM))
        out.append(Case(codec, "cm", "cm", CM))
        out.append(Case(codec, "both", "both", GCM))
    # Profile restriction really applies: one side offers both, the other only CM.
    out.append(Case("opus", "both", "cm", CM))
    out.append(Case("opus", "cm", "both", CM))
    # No profile in common: both ends must report an error, within the timeout.
    out.append(Case("pcmu", "gcm", "cm", None))
    # What the Swift leg may do instead of aiortc: offer setup:active or passive
    # rather than actpass, or be ICE-lite (then aiortc must be controlling and
    # nominate; the edited side is really a full agent, so an ICE-lite offer also
    # exercises the role-conflict repair).
    out.append(Case("opus", "both", "both", GCM, "offer-setup-active",
                    edit_offer=lambda s: set_setup(s, "active"), dtls_roles=("client", "server")))
    out.append(Case("opus", "both", "both", GCM, "offer-setup-passive",
                    edit_offer=lambda s: set_setup(s, "passive"), dtls_roles=("server", "client")))
    out.append(Case("opus", "both", "both", GCM, "answer-ice-lite",
                    edit_answer=add_ice_lite, ice_roles=("controlling", "controlled")))
    out.append(Case("pcmu", "both", "both", GCM, "offer-ice-lite", edit_offer=add_ice_lite))
    return out


def set_setup(sdp: str, value: str) -> str:
    return re.sub(r"^a=setup:\S+", f"a=setup:{value}", sdp, flags=re.MULTILINE)


def add_ice_lite(sdp: str) -> str:
    # Session level: right after the t= line.
    return re.sub(r"^(t=.*\r?\n)", r"\1a=ice-lite\r\n", sdp, count=1, flags=re.MULTILINE)


async def main_async(args: argparse.Namespace) -> int:
    directory = args.keep or tempfile.mkdtemp(prefix="aiortc-selfcheck-")
    os.makedirs(directory, exist_ok=True)
    failures = 0
    total_start = time.monotonic()
    selected = [c for c in cases() if not args.only or args.only in c.name]
    for case in selected:
        start = time.monotonic()
        try:
            offerer, answerer = await run_case(case, args.seconds, directory)
            summary = check_case(case, offerer, answerer, args.seconds)
            print(f"PASS {case.name:20s} {time.monotonic() - start:5.1f} s  {summary}", flush=True)
        except (CheckFailed, asyncio.TimeoutError) as exc:
            failures += 1
            print(f"FAIL {case.name:20s} {time.monotonic() - start:5.1f} s  {exc!r}", flush=True)
    print(f"{len(selected) - failures}/{len(selected)} passed in {time.monotonic() - total_start:.1f} s; recordings in {directory}")
    return 1 if failures else 0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--keep", help="directory for the recordings (default: a temp dir)")
    parser.add_argument("--only", help="run only cases whose name contains this")
    args = parser.parse_args()
    sys.exit(asyncio.run(main_async(args)))


if __name__ == "__main__":
    main()
