import Testing
import Foundation
import ParleyCrypto
import ParleyTestSupport

@Suite struct DTLSCertificateTests {
    @Test func generatedCertificatesDiffer() throws {
        let a = try DTLSCertificate.generate(), b = try DTLSCertificate.generate()
        #expect(a.fingerprint != b.fingerprint)
        #expect(a.der != b.der)
        #expect(a.der.first == 0x30, "DER SEQUENCE")
        #expect(try Digest.hash(.sha256, a.der) == a.fingerprint.bytes)
    }

    // RFC 8122 §5: hash-func SP fingerprint, fingerprint = 2UHEX *(":" 2UHEX).
    @Test func rfc8122TextForm() throws {
        let fingerprint = try #require(DTLSFingerprint(bytes: Array(0..<32)))
        let text = fingerprint.sdpValue
        #expect(text == "sha-256 00:01:02:03:04:05:06:07:08:09:0A:0B:0C:0D:0E:0F:10:11:12:13:14:15:16:17:18:19:1A:1B:1C:1D:1E:1F")
        #expect(fingerprint.abbreviated == "00:01:02…1E:1F")
    }

    @Test func fingerprintJSON() throws {
        let fingerprint = try #require(DTLSFingerprint(bytes: [UInt8](repeating: 0xAB, count: 32)))
        let json = String(decoding: try JSONEncoder().encode(fingerprint), as: UTF8.self)
        #expect(json.contains("\"algorithm\":\"sha-256\""))
        #expect(json.contains("\"fingerprint\":\"ab:ab:"))
    }

    // RFC 5764 §4.2: client key | server key | client salt | server salt.
    @Test func rfc5764KeyingMaterialSplit() throws {
        let exported = (0..<60).map { UInt8($0) }
        let client = try #require(SRTPKeyingMaterial(profile: .aes128CMHMACSHA1_80, localRole: .client, exported: exported))
        #expect(client.clientMasterKey == Array(0..<16))
        #expect(client.serverMasterKey == Array(16..<32))
        #expect(client.clientMasterSalt == Array(32..<46))
        #expect(client.serverMasterSalt == Array(46..<60))
        #expect(client.localKeyAndSalt == Array(0..<16) + Array(32..<46))
        #expect(client.remoteKeyAndSalt == Array(16..<32) + Array(46..<60))
        let server = try #require(SRTPKeyingMaterial(profile: .aes128CMHMACSHA1_80, localRole: .server, exported: exported))
        #expect(server.localKeyAndSalt == client.remoteKeyAndSalt)
        #expect(SRTPKeyingMaterial(profile: .aeadAES128GCM, localRole: .client, exported: exported) == nil)
        let gcm = try #require(SRTPKeyingMaterial(profile: .aeadAES128GCM, localRole: .client, exported: Array(exported.prefix(56))))
        #expect(gcm.clientMasterSalt == Array(32..<44) && gcm.serverMasterSalt == Array(44..<56))
        #expect(!client.description.contains("0, 1"), "keys stay out of descriptions")
    }

    // RFC 5763 §5: the active side is the DTLS client.
    @Test func rfc5763SetupToRole() {
        #expect(DTLSRole(localSetup: "active") == .client)
        #expect(DTLSRole(localSetup: "PASSIVE") == .server)
        #expect(DTLSRole(localSetup: "actpass") == nil)
        #expect(DTLSRole(localSetup: "holdconn") == nil)
    }
}
