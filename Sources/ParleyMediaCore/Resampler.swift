#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A streaming sample-rate converter for 16-bit PCM: a rational polyphase FIR
/// (Kaiser-windowed sinc) that upsamples by `L`, low-pass filters and keeps every `M`-th
/// sample, with `L/M = outputRate/inputRate` in lowest terms.
///
/// The filter passes up to 40 % of the lower rate (3.2 kHz when 8 kHz is involved), reaches
/// its stop band (at least 70 dB down) at the lower rate's Nyquist frequency, and has unity
/// gain in the pass band. It keeps its history between calls, so feeding a signal in 20 ms
/// frames gives exactly the same samples as feeding it in one buffer. Output lags input by
/// `delaySamples` output samples (the filter's group delay).
///
/// Mono only: resample each channel of a stereo stream with its own resampler.
public struct Resampler: Sendable {
    /// Input sample rate in Hz.
    public let inputRate: Int
    /// Output sample rate in Hz.
    public let outputRate: Int
    /// Upsampling factor L.
    private let up: Int
    /// Downsampling factor M.
    private let down: Int
    /// Taps per polyphase branch, rounded up to a multiple of 8 for SIMD.
    private let tapsPerPhase: Int
    /// Branch p occupies `coefficients[p * K ..< (p + 1) * K]`, taps in reverse order (zero
    /// padding first), so that a dot product with the input window `x[i - K + 1 ... i]` in
    /// increasing order applies taps h[p + kL], k = K-1...0.
    private let coefficients: [Float]
    /// The last `tapsPerPhase - 1` input samples (zeros at start).
    private var history: [Float]
    /// Position of the next output sample, in units of 1/L input sample, relative to the
    /// first sample of the next input block.
    private var position: Int = 0

    /// The filter's group delay in output samples.
    public let delaySamples: Int

    /// Creates a converter between two rates (each 1000...384000 Hz, ratio in lowest
    /// terms with L and M at most 1000; 8, 16, 32 and 48 kHz in any pairing are typical).
    /// - Throws: `CodecError` `.invalidArgument` for unsupported rates.
    public init(from inputRate: Int, to outputRate: Int) throws(CodecError) {
        guard (1000...384_000).contains(inputRate), (1000...384_000).contains(outputRate) else {
            throw CodecError(.invalidArgument, "resampler", "rates \(inputRate) -> \(outputRate) Hz: each must be 1000...384000")
        }
        let divisor = Resampler.gcd(inputRate, outputRate)
        let up = outputRate / divisor
        let down = inputRate / divisor
        guard up <= 1000, down <= 1000 else {
            throw CodecError(.invalidArgument, "resampler", "ratio \(up)/\(down) is too fine (L and M must be at most 1000)")
        }
        self.inputRate = inputRate
        self.outputRate = outputRate
        self.up = up
        self.down = down

        if up == 1 && down == 1 {
            tapsPerPhase = 1
            coefficients = [1]
            history = []
            delaySamples = 0
            return
        }
        // Design at the upsampled rate L * inputRate. Cut-off halfway through the
        // transition band 0.4...0.5 of the lower rate; Kaiser formula for 70 dB.
        let upsampledRate = Double(up * inputRate)
        let lowerRate = Double(min(inputRate, outputRate))
        let cutoff = 0.45 * lowerRate / upsampledRate  // cycles per upsampled sample
        let transition = 0.1 * lowerRate / upsampledRate
        let attenuation = 70.0
        let beta = 0.1102 * (attenuation - 8.7)
        var length = Int(((attenuation - 8) / (2.285 * 2 * Double.pi * transition)).rounded(.up)) + 1
        length = (length + up - 1) / up * up  // whole number of taps per phase
        let centre = Double(length - 1) / 2
        let besselBeta = Resampler.besselI0(beta)
        var taps = [Double](repeating: 0, count: length)
        for n in 0..<length {
            let t = Double(n) - centre
            let x = 2 * cutoff * t
            let sinc = x == 0 ? 1.0 : sin(Double.pi * x) / (Double.pi * x)
            let ratio = t / centre
            let window = Resampler.besselI0(beta * (max(0, 1 - ratio * ratio)).squareRoot()) / besselBeta
            // Gain L restores the level lost to the inserted zeros.
            taps[n] = 2 * cutoff * sinc * window * Double(up)
        }
        let perPhase = length / up
        let padded = (perPhase + 7) / 8 * 8
        tapsPerPhase = padded
        var flat = [Float](repeating: 0, count: up * padded)
        for p in 0..<up {
            for k in 0..<perPhase {
                flat[p * padded + padded - 1 - k] = Float(taps[p + k * up])
            }
        }
        coefficients = flat
        history = [Float](repeating: 0, count: padded - 1)
        delaySamples = Int((centre / Double(down)).rounded())
    }

    /// Number of output samples the next `process` call yields for `inputCount` samples.
    public func outputCount(forInputCount inputCount: Int) -> Int {
        let limit = inputCount * up  // outputs at positions < limit
        return position < limit ? (limit - position + down - 1) / down : 0
    }

    /// Converts the next block of a stream; blocks may be of any length.
    public mutating func process(_ input: [Int16]) -> [Int16] {
        if up == 1 && down == 1 { return input }
        let keep = tapsPerPhase - 1
        // History then input, as floats, in one buffer made once per call: a room resamples
        // every participant every tick, so appending sample by sample and copying the
        // history in and out showed in its profile.
        let window = [Float](unsafeUninitializedCapacity: keep + input.count) { buffer, count in
            history.withUnsafeBufferPointer { past in
                for index in 0..<keep { buffer[index] = past[index] }
            }
            input.withUnsafeBufferPointer { samples in
                for index in 0..<samples.count { buffer[keep &+ index] = Float(samples[index]) }
            }
            count = keep + input.count
        }
        let limit = input.count * up
        let produced = outputCount(forInputCount: input.count)
        let taps = tapsPerPhase
        let up = self.up
        let down = self.down
        var position = self.position
        let output = [Int16](unsafeUninitializedCapacity: produced) { out, written in
            window.withUnsafeBufferPointer { x in
                coefficients.withUnsafeBufferPointer { h in
                    guard let xBase = x.baseAddress, let hBase = h.baseAddress else { return }
                    let xRaw = UnsafeRawPointer(xBase)
                    let hRaw = UnsafeRawPointer(hBase)
                    let stride = MemoryLayout<Float>.stride
                    // Indices stay within the window and the coefficients (checked by the
                    // design: position < limit, branch < up * taps), so wrapping arithmetic.
                    while position < limit {
                        let i = position / up  // newest input sample used, 0-based in this block
                        let branch = (position &- i &* up) &* taps
                        // Window x[i - K + 1 ... i] sits at buffer offset i ... i + K - 1.
                        var sum = SIMD8<Float>()
                        var k = 0
                        while k < taps {
                            let xs = xRaw.loadUnaligned(fromByteOffset: (i &+ k) &* stride, as: SIMD8<Float>.self)
                            let hs = hRaw.loadUnaligned(fromByteOffset: (branch &+ k) &* stride, as: SIMD8<Float>.self)
                            sum += xs * hs
                            k &+= 8
                        }
                        out[written] = Self.roundedSample(sum.sum())
                        written &+= 1
                        position &+= down
                    }
                }
            }
        }
        self.position = position - limit
        history.withUnsafeMutableBufferPointer { past in
            window.withUnsafeBufferPointer { x in
                let start = x.count - keep
                for index in 0..<keep { past[index] = x[start &+ index] }
            }
        }
        return output
    }

    /// `value` rounded half away from zero and clamped to 16 bits, as
    /// `Int16(clamping: Int(value.rounded()))`, without a call to `roundf`: a float is
    /// exact in a double, and so is it plus or minus one half, so truncating that rounds
    /// exactly as `rounded()` does (a NaN or an infinity traps in both).
    @inline(__always)
    private static func roundedSample(_ value: Float) -> Int16 {
        let wide = Double(value)
        return Int16(clamping: Int(wide < 0 ? wide - 0.5 : wide + 0.5))
    }

    /// Clears the history, as for a new stream.
    public mutating func reset() {
        history = [Float](repeating: 0, count: history.count)
        position = 0
    }

    private static func gcd(_ a: Int, _ b: Int) -> Int {
        var (a, b) = (a, b)
        while b != 0 { (a, b) = (b, a % b) }
        return a
    }

    /// Zeroth-order modified Bessel function of the first kind, by its power series.
    private static func besselI0(_ x: Double) -> Double {
        var sum = 1.0
        var term = 1.0
        let half = x / 2
        for k in 1..<50 {
            term *= (half / Double(k)) * (half / Double(k))
            sum += term
            if term < sum * 1e-12 { break }
        }
        return sum
    }
}
