#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A sine-wave generator whose phase continues from one call to the next, so frames
/// generated one after another join without clicks.
public struct ToneGenerator: Sendable, Hashable {
    /// Tone frequency in Hz.
    public var frequency: Double
    /// Peak amplitude as a fraction of full scale, 0...1.
    public var amplitude: Double
    /// Samples per second.
    public let sampleRate: Int
    /// Current phase in cycles, 0..<1.
    public private(set) var phase: Double

    /// A generator starting at `phase` cycles (default 0).
    public init(frequency: Double, amplitude: Double = 0.5, sampleRate: Int, phase: Double = 0) {
        self.frequency = frequency
        self.amplitude = max(0, min(1, amplitude))
        self.sampleRate = sampleRate
        self.phase = phase - phase.rounded(.down)
    }

    /// The next `count` samples of the tone.
    public mutating func next(count: Int) -> [Int16] {
        guard count > 0 else { return [] }
        let step = sampleRate > 0 ? frequency / Double(sampleRate) : 0
        let peak = max(0, min(1, amplitude)) * 32767
        var output = [Int16](repeating: 0, count: count)
        for n in 0..<count {
            output[n] = Int16(clamping: Int((peak * sin(2 * Double.pi * phase)).rounded()))
            phase += step
            phase -= phase.rounded(.down)
        }
        return output
    }
}
