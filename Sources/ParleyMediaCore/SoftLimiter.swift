/// Brings one stream of summed audio back into 16 bits without clipping: a peak limiter
/// with a gain per stream, and a soft knee for what the gain did not catch.
///
/// For each frame the gain that keeps its peak at `threshold` is found; a louder frame
/// lowers the gain at once (ramped over the first millisecond, so the step does not click),
/// a quieter one lets it recover toward 1 by `releasePerFrame` of the way each frame. The
/// gain is the stream's state: a mix that has been loud stays turned down for a while
/// rather than pumping from frame to frame, and every output stream of a mixer keeps its
/// own so one listener's mix does not move another's. Whatever still lies above
/// `threshold` (only inside the attack ramp) goes through a soft knee that approaches full
/// scale without reaching it, so the output never clips and never wraps.
///
/// A frame whose peak is under `threshold` while the gain is 1 passes unchanged, sample
/// for sample: one talker at a normal level is heard at unity gain.
public struct SoftLimiter: Sendable, Hashable {
    /// The peak the limiter holds the output to, as a fraction of full scale (0.1...1).
    public let threshold: Float
    /// The share of the way back to unity gain recovered per frame (0...1).
    public let releasePerFrame: Float
    /// Samples over which a lower gain takes over at the start of a frame.
    public let attackSamples: Int
    /// The gain applied at the end of the last frame (1: untouched).
    public private(set) var gain: Float = 1

    /// - Parameters:
    ///   - threshold: a fraction of full scale; clamped to 0.1...1.
    ///   - releasePerFrame: clamped to 0...1; about 0.12 recovers 90 % of the gain in 350 ms
    ///     of 20 ms frames.
    ///   - attackSamples: the attack ramp, such as a millisecond at the stream's rate.
    public init(threshold: Float = 0.7, releasePerFrame: Float = 0.12, attackSamples: Int = 16) {
        self.threshold = min(max(threshold, 0.1), 1)
        self.releasePerFrame = min(max(releasePerFrame, 0), 1)
        self.attackSamples = max(1, attackSamples)
    }

    /// Limits `mix` (sums of 16-bit samples) into `output`, which must be as long.
    /// Returns whether the frame was turned down (a gain under 1 anywhere in it).
    @discardableResult
    public mutating func process(_ mix: UnsafeBufferPointer<Int32>, into output: UnsafeMutableBufferPointer<Int16>) -> Bool {
        let count = min(mix.count, output.count)
        guard count > 0 else { return false }
        let fullScale: Float = 32767
        let ceiling = threshold * fullScale
        var peak: Int32 = 0
        for index in 0..<count {
            let magnitude = mix[index] == Int32.min ? Int32.max : abs(mix[index])
            if magnitude > peak { peak = magnitude }
        }
        let target: Float = Float(peak) > ceiling ? ceiling / Float(peak) : 1
        if gain >= 1 && target >= 1 {
            for index in 0..<count { output[index] = Int16(clamping: mix[index]) }
            return false
        }
        let start = gain
        let end: Float
        let ramp: Int
        if target < gain {
            end = target
            ramp = min(attackSamples, count)
        } else {
            end = min(target, gain + (1 - gain) * releasePerFrame)
            ramp = count
        }
        let step = (end - start) / Float(ramp)
        let knee = threshold
        let headroom = 1 - knee
        for index in 0..<count {
            let g = index < ramp ? start + step * Float(index + 1) : end
            var value = Float(mix[index]) * g / fullScale
            let magnitude = abs(value)
            if magnitude > knee {
                // x / (1 + x) stays under 1: the knee bends toward full scale, never past it.
                let over = headroom > 0 ? (magnitude - knee) / headroom : 0
                let bent = knee + headroom * over / (1 + over)
                value = value < 0 ? -bent : bent
            }
            output[index] = Int16(clamping: Int32((value * fullScale).rounded()))
        }
        gain = end >= 0.9999 ? 1 : end
        return true
    }

    /// Limits `mix` into a new array of the same length.
    public mutating func process(_ mix: [Int32]) -> [Int16] {
        var output = [Int16](repeating: 0, count: mix.count)
        mix.withUnsafeBufferPointer { input in
            output.withUnsafeMutableBufferPointer { _ = process(input, into: $0) }
        }
        return output
    }
}
