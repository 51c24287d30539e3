/// ITU-T G.711 companding: 16-bit linear PCM to and from 8-bit mu-law (PCMU, RTP payload
/// type 0) and A-law (PCMA, payload type 8), as RFC 3551 section 4.5.14 uses them.
///
/// Encoding keeps the 14 (mu-law) or 13 (A-law) most significant bits the law works on and
/// picks the segment and quantisation step; decoding returns the midpoint of the step,
/// scaled back to 16 bits. Every code decodes and re-encodes to itself, except mu-law's
/// negative zero 0x7F, which decodes to 0 and re-encodes as positive zero 0xFF.
public enum G711 {
    // MARK: mu-law (G.711 section 3, table 2)

    /// The bias added before the segment search: it makes segment boundaries powers of two.
    private static let muLawBias = 33
    /// The largest 14-bit magnitude that still fits segment 7 after the bias (0x1FFF - 33).
    private static let muLawClip = 8158

    /// Encodes one linear sample to mu-law.
    @inlinable
    public static func muLaw(encoding sample: Int16) -> UInt8 {
        encodeMuLaw(Int(sample))
    }

    @usableFromInline
    static func encodeMuLaw(_ sample: Int) -> UInt8 {
        // 14-bit magnitude. Negative values use the one's complement, as the ITU-T G.191
        // reference does, so -1...-4 map to (negative) zero just as 0...3 map to zero.
        let negative = sample < 0
        var value = negative ? (~sample) >> 2 : sample >> 2
        let mask = negative ? 0x7F : 0xFF
        value = min(value, muLawClip) + muLawBias
        // Segment i holds biased magnitudes 32 << i ..< 64 << i.
        var segment = 0
        while segment < 7 && value >= (0x40 << segment) { segment += 1 }
        let code = (segment << 4) | ((value >> (segment + 1)) & 0x0F)
        return UInt8(truncatingIfNeeded: code ^ mask)
    }

    /// Decodes one mu-law code to a linear sample (range -32124...32124).
    @inlinable
    public static func muLaw(decoding code: UInt8) -> Int16 {
        muLawTable[Int(code)]
    }

    @usableFromInline
    static let muLawTable: [Int16] = (0...255).map { decodeMuLaw(UInt8($0)) }

    private static func decodeMuLaw(_ code: UInt8) -> Int16 {
        let bits = Int(~code)
        let segment = (bits >> 4) & 0x07
        let magnitude = (((bits & 0x0F) << 3) + (muLawBias << 2)) << segment
        let linear = magnitude - (muLawBias << 2)
        return Int16(bits & 0x80 != 0 ? -linear : linear)
    }

    // MARK: A-law (G.711 section 2, table 1)

    /// Encodes one linear sample to A-law (with the even bits inverted, as transmitted).
    @inlinable
    public static func aLaw(encoding sample: Int16) -> UInt8 {
        encodeALaw(Int(sample))
    }

    @usableFromInline
    static func encodeALaw(_ sample: Int) -> UInt8 {
        var value = sample >> 3  // 13-bit
        let mask: Int
        if value >= 0 {
            mask = 0xD5
        } else {
            // A-law is sign-magnitude with no zero code: -1 maps onto the smallest negative step.
            mask = 0x55
            value = -value - 1
        }
        var segment = 0
        while segment < 8 && value >= (0x20 << segment) { segment += 1 }
        if segment >= 8 { return UInt8(0x7F ^ mask) }
        let mantissa = segment < 2 ? (value >> 1) & 0x0F : (value >> segment) & 0x0F
        return UInt8(truncatingIfNeeded: ((segment << 4) | mantissa) ^ mask)
    }

    /// Decodes one A-law code to a linear sample (range -32256...32256).
    @inlinable
    public static func aLaw(decoding code: UInt8) -> Int16 {
        aLawTable[Int(code)]
    }

    @usableFromInline
    static let aLawTable: [Int16] = (0...255).map { decodeALaw(UInt8($0)) }

    private static func decodeALaw(_ code: UInt8) -> Int16 {
        let bits = Int(code ^ 0x55)
        let segment = (bits >> 4) & 0x07
        var magnitude = ((bits & 0x0F) << 4) + 8
        if segment > 0 { magnitude = (magnitude + 0x100) << (segment - 1) }
        return Int16(bits & 0x80 != 0 ? magnitude : -magnitude)
    }

    // MARK: Buffers

    /// Encodes a buffer of linear samples to mu-law, one byte per sample.
    public static func muLaw(encoding samples: [Int16]) -> [UInt8] {
        samples.map { encodeMuLaw(Int($0)) }
    }

    /// Decodes mu-law bytes to linear samples.
    public static func muLaw(decoding codes: [UInt8]) -> [Int16] {
        codes.map { muLawTable[Int($0)] }
    }

    /// Encodes a buffer of linear samples to A-law, one byte per sample.
    public static func aLaw(encoding samples: [Int16]) -> [UInt8] {
        samples.map { encodeALaw(Int($0)) }
    }

    /// Decodes A-law bytes to linear samples.
    public static func aLaw(decoding codes: [UInt8]) -> [Int16] {
        codes.map { aLawTable[Int($0)] }
    }
}
