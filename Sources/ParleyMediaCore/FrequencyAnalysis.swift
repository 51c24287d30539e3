#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Measurements for tests and tools: the dominant frequency of a signal, the level at one
/// frequency, and the RMS level.
///
/// Levels are in dBFS relative to a full-scale square wave: an RMS of 32768 is 0 dBFS, so a
/// full-scale sine reads -3.01 dBFS.
public enum FrequencyAnalysis {
    /// The frequency in Hz of the strongest spectral peak, or nil for silence or fewer than
    /// 16 samples.
    ///
    /// A Hann-windowed FFT (zero-padded to the next power of two, at most 2^18 points) finds the
    /// peak bin; a parabola through the log magnitudes of the peak and its neighbours
    /// refines it. On one second of a clean tone the error is well under 1 Hz.
    /// - Parameter range: only peaks inside this band (Hz) are considered (default: all).
    public static func dominantFrequency(samples: [Int16], sampleRate: Int, range: ClosedRange<Double>? = nil) -> Double? {
        guard samples.count >= 16, sampleRate > 0 else { return nil }
        let count = min(samples.count, 1 << 18)
        var size = 1
        while size < count { size <<= 1 }
        var real = [Double](repeating: 0, count: size)
        var imaginary = [Double](repeating: 0, count: size)
        for n in 0..<count {
            let hann = 0.5 - 0.5 * cos(2 * Double.pi * Double(n) / Double(count - 1))
            real[n] = Double(samples[n]) * hann
        }
        fft(&real, &imaginary)
        let binWidth = Double(sampleRate) / Double(size)
        let lowBin = max(1, Int(((range?.lowerBound ?? 0) / binWidth).rounded(.up)))
        let highBin = min(size / 2 - 1, Int(((range?.upperBound ?? Double(sampleRate) / 2) / binWidth).rounded(.down)))
        guard lowBin <= highBin else { return nil }
        var best = lowBin
        var bestPower = -1.0
        for bin in lowBin...highBin {
            let power = real[bin] * real[bin] + imaginary[bin] * imaginary[bin]
            if power > bestPower { bestPower = power; best = bin }
        }
        guard bestPower > 0 else { return nil }
        func logMagnitude(_ bin: Int) -> Double {
            0.5 * log(max(real[bin] * real[bin] + imaginary[bin] * imaginary[bin], 1e-30))
        }
        let (a, b, c) = (logMagnitude(best - 1), logMagnitude(best), logMagnitude(best + 1))
        let denominator = a - 2 * b + c
        let offset = denominator < 0 ? 0.5 * (a - c) / denominator : 0
        return (Double(best) + max(-0.5, min(0.5, offset))) * binWidth
    }

    /// RMS level in dBFS (-inf for digital silence is reported as -200).
    public static func rmsDBFS(samples: [Int16]) -> Double {
        guard !samples.isEmpty else { return -200 }
        var sum = 0.0
        for sample in samples { sum += Double(sample) * Double(sample) }
        let rms = (sum / Double(samples.count)).squareRoot()
        return rms > 0 ? 20 * log10(rms / 32768) : -200
    }

    /// Level in dBFS of the component at `frequency` (Goertzel algorithm over all samples),
    /// scaled so that a pure sine at that frequency reads the same as `rmsDBFS`.
    public static func toneLevelDBFS(samples: [Int16], sampleRate: Int, frequency: Double) -> Double {
        guard !samples.isEmpty, sampleRate > 0 else { return -200 }
        let omega = 2 * Double.pi * frequency / Double(sampleRate)
        let coefficient = 2 * cos(omega)
        var s1 = 0.0, s2 = 0.0
        for sample in samples {
            let s0 = Double(sample) + coefficient * s1 - s2
            s2 = s1
            s1 = s0
        }
        let power = s1 * s1 + s2 * s2 - coefficient * s1 * s2
        // |X(f)| = A * N / 2 for a sine of amplitude A; its RMS is A / sqrt 2.
        let rms = power.squareRoot() * 2 / Double(samples.count) / 2.0.squareRoot()
        return rms > 0 ? 20 * log10(rms / 32768) : -200
    }

    /// In-place iterative radix-2 FFT; `real.count` must be a power of two.
    static func fft(_ real: inout [Double], _ imaginary: inout [Double]) {
        let n = real.count
        var j = 0
        for i in 1..<n {
            var bit = n >> 1
            while j & bit != 0 { j ^= bit; bit >>= 1 }
            j |= bit
            if i < j {
                real.swapAt(i, j)
                imaginary.swapAt(i, j)
            }
        }
        var length = 2
        while length <= n {
            let angle = -2 * Double.pi / Double(length)
            let (stepCos, stepSin) = (cos(angle), sin(angle))
            var start = 0
            while start < n {
                var (wr, wi) = (1.0, 0.0)
                for k in 0..<(length / 2) {
                    let u = start + k, v = u + length / 2
                    let tr = real[v] * wr - imaginary[v] * wi
                    let ti = real[v] * wi + imaginary[v] * wr
                    real[v] = real[u] - tr
                    imaginary[v] = imaginary[u] - ti
                    real[u] += tr
                    imaginary[u] += ti
                    (wr, wi) = (wr * stepCos - wi * stepSin, wr * stepSin + wi * stepCos)
                }
                start += length
            }
            length <<= 1
        }
    }
}
