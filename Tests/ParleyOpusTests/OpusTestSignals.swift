#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Test signals and measurements for the Opus tests (this target cannot see ParleyMediaCore).
enum OpusTestSignals {
    /// `count` samples of a sine at `frequency` Hz, amplitude `amplitude` of full scale.
    static func tone(frequency: Double, sampleRate: Int = 48000, count: Int, amplitude: Double = 0.5) -> [Int16] {
        (0..<count).map { n in
            Int16(amplitude * 32767 * sin(2 * Double.pi * frequency * Double(n) / Double(sampleRate)))
        }
    }

    /// A voiced, speech-like signal: harmonics of a gliding 120-220 Hz fundamental with a
    /// syllable-rate envelope, so SILK (and its in-band FEC) is what the encoder uses.
    static func speechLike(sampleRate: Int = 48000, count: Int) -> [Int16] {
        var phase = 0.0
        return (0..<count).map { n in
            let t = Double(n) / Double(sampleRate)
            let f0 = 170 + 50 * sin(2 * Double.pi * 1.3 * t)
            phase += 2 * Double.pi * f0 / Double(sampleRate)
            var value = 0.0
            for harmonic in 1...12 {
                value += sin(Double(harmonic) * phase) / Double(harmonic)
            }
            let envelope = 0.55 + 0.45 * sin(2 * Double.pi * 4 * t)
            return Int16(clamping: Int(value * envelope * 6000))
        }
    }

    /// Frequency from rising zero crossings, interpolated between samples: accurate to well
    /// under 1 Hz on a clean tone lasting a second.
    static func zeroCrossingFrequency(_ samples: [Int16], sampleRate: Int) -> Double? {
        var first: Double?
        var last = 0.0
        var crossings = 0
        for i in 1..<samples.count where samples[i - 1] < 0 && samples[i] >= 0 {
            let a = Double(samples[i - 1]), b = Double(samples[i])
            let position = Double(i - 1) + (-a) / (b - a)
            if first == nil { first = position }
            last = position
            crossings += 1
        }
        guard let first, crossings > 1, last > first else { return nil }
        return Double(crossings - 1) * Double(sampleRate) / (last - first)
    }

    /// RMS in dBFS (a full-scale sine is -3 dBFS).
    static func rmsDBFS(_ samples: [Int16]) -> Double {
        let power = samples.reduce(0.0) { $0 + Double($1) * Double($1) } / Double(max(samples.count, 1))
        return 10 * log10(max(power, 1e-12) / (32768.0 * 32768.0))
    }

    /// Normalised cross-correlation at zero lag, in -1...1.
    static func correlation(_ a: [Int16], _ b: [Int16]) -> Double {
        var ab = 0.0, aa = 0.0, bb = 0.0
        for i in 0..<min(a.count, b.count) {
            ab += Double(a[i]) * Double(b[i])
            aa += Double(a[i]) * Double(a[i])
            bb += Double(b[i]) * Double(b[i])
        }
        return aa > 0 && bb > 0 ? ab / (aa * bb).squareRoot() : 0
    }

    /// Splits `samples` into consecutive frames of `size`, dropping a short tail.
    static func frames(_ samples: [Int16], size: Int) -> [[Int16]] {
        stride(from: 0, through: samples.count - size, by: size).map { Array(samples[$0..<($0 + size)]) }
    }
}
