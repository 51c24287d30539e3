import ParleyWireCore
import ParleyCrypto
import ParleyICECore
import ParleyMediaLegCore
import ParleySTUN

/// SDP from a real (unstarted) device-side media core, for signaling tests that need
/// valid offers and answers but no audio.
enum SDPPeer {
    static func core(port: UInt16) throws -> MediaLegCore {
        var configuration = MediaLegConfiguration(iceMode: .full, certificate: try DTLSCertificate.generate())
        configuration.codecs = [.opus]
        return MediaLegCore(configuration: configuration, localAddresses: [ICETransportAddress(ip: .ipv4(0x7F00_0001), port: port)],
                            now: ClockReading(instant: .now, unixNanoseconds: 1_800_000_000_000_000_000),
                            random: SystemRandomNumberGenerator())
    }

    static func offer() throws -> String {
        var peer = try core(port: 9)
        return try peer.makeOffer()
    }

    static func answer(to offer: String) throws -> String {
        var peer = try core(port: 9)
        return try peer.answer(offer: offer)
    }
}
