#!/usr/bin/env python3
"""Scores received speech against the reference it was made from: PESQ-WB and STOI.

Used by `ParleyBench speech` (Sources/ParleyBench/BenchSpeech.swift, docs/bench-speech.md).

    speech_score.py REFERENCE.wav MODE DEGRADED.wav [DEGRADED.wav ...]

MODE `loop`: the degraded file records a call whose sender played REFERENCE looped, from
an unknown moment, so the recording is (after the call's first seconds) REFERENCE
repeated and shifted. A window of one REFERENCE length, taken after SKIP_SECONDS, is
aligned to REFERENCE by circular cross-correlation (the reference rotated by the lag),
which needs the recording to be at least SKIP_SECONDS + one reference long.

MODE `once`: the degraded file is REFERENCE passed once through a codec, delayed by its
look-ahead; aligned by linear cross-correlation over lags of 0-200 ms and trimmed.

Every file is resampled to 16 kHz first. One JSON object per degraded file on standard
output: file, pesq (wide band, P.862.2), stoi, lagMs (the alignment lag), peak (the
normalised correlation at that lag: near 1 when the file holds the reference, near 0
when it holds something else), or error.
"""
import json
import math
import sys

import numpy as np
from scipy.io import wavfile
from scipy.signal import resample_poly
from pesq import pesq
from pystoi import stoi

RATE = 16000
SKIP_SECONDS = 1.5
# Below this normalised correlation the file is not the reference (silence, a tone, noise).
MIN_PEAK = 0.3


def load(path):
    rate, data = wavfile.read(path)
    x = data.astype(np.float64)
    if x.ndim > 1:
        x = x.mean(axis=1)
    if data.dtype == np.int16:
        x /= 32768.0
    if rate != RATE:
        g = math.gcd(rate, RATE)
        x = resample_poly(x, RATE // g, rate // g)
    return x


def align_loop(ref, deg):
    n = len(ref)
    start = int(SKIP_SECONDS * RATE)
    if len(deg) < start + n:
        raise ValueError(f"recording is {len(deg) / RATE:.2f} s, needs {(start + n) / RATE:.2f} s")
    window = deg[start:start + n]
    # r[k] = sum_i window[i] * ref[(i + k) mod n]
    corr = np.fft.irfft(np.conj(np.fft.rfft(window)) * np.fft.rfft(ref), n)
    lag = int(np.argmax(corr))
    aligned = np.roll(ref, -lag)
    peak = corr[lag] / (np.linalg.norm(window) * np.linalg.norm(ref) + 1e-12)
    return aligned, window, lag, peak


def align_once(ref, deg):
    n = len(ref)
    max_lag = int(0.2 * RATE)
    padded = np.concatenate([deg, np.zeros(n + max_lag)])
    scores = [np.dot(ref, padded[lag:lag + n]) for lag in range(max_lag + 1)]
    lag = int(np.argmax(scores))
    window = padded[lag:lag + n]
    peak = scores[lag] / (np.linalg.norm(window) * np.linalg.norm(ref) + 1e-12)
    return ref, window, lag, peak


def main(argv):
    if len(argv) < 4 or argv[2] not in ("loop", "once"):
        sys.stderr.write(__doc__)
        return 2
    ref = load(argv[1])
    for path in argv[3:]:
        result = {"file": path}
        try:
            deg = load(path)
            aligned, window, lag, peak = (align_loop if argv[2] == "loop" else align_once)(ref, deg)
            result["lagMs"] = round(lag * 1000.0 / RATE, 1)
            result["peak"] = round(float(peak), 3)
            if peak < MIN_PEAK:
                raise ValueError(f"does not hold the reference (correlation {peak:.2f})")
            result["pesq"] = round(float(pesq(RATE, aligned, window, "wb")), 3)
            result["stoi"] = round(float(stoi(aligned, window, RATE, extended=False)), 3)
        except Exception as error:  # one bad file is reported, the others still scored
            result["error"] = str(error)
        print(json.dumps(result), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
