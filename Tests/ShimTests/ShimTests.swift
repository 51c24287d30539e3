import Testing
import Glibc
import COpus
import CSRTP
import COpenSSL
import CSQLite
import CLinux
import CALSA

// Each shim is linked and its wrappers for variadic calls and macros work.
@Suite struct ShimTests {
    @Test func opusEncoderCtlWrappers() throws {
        var error: Int32 = 0
        let encoder = opus_encoder_create(48000, 1, OPUS_APPLICATION_VOIP, &error)
        #expect(error == OPUS_OK)
        defer { opus_encoder_destroy(encoder) }
        #expect(parley_opus_set_bitrate(encoder, 32000) == OPUS_OK)
        var bitrate: Int32 = 0
        #expect(parley_opus_get_bitrate(encoder, &bitrate) == OPUS_OK)
        #expect(bitrate == 32000)
        var lookahead: Int32 = 0
        #expect(parley_opus_get_lookahead(encoder, &lookahead) == OPUS_OK)
        #expect(lookahead > 0)
    }

    // Only linking is checked here: srtp_init belongs to ParleySRTP, which runs it once per
    // process. A second, concurrent srtp_init from another test re-runs libsrtp's crypto
    // kernel self-tests under a live session and makes srtp_create fail with bad_param.
    @Test func srtpLinks() {
        #expect(srtp_get_version() >= 0x0200_0000)
        #expect(String(cString: srtp_get_version_string()).contains("libsrtp2"))
    }

    @Test func openSSLIsVersion3() {
        #expect(OpenSSL_version_num() >= 0x3000_0000)
        let ctx = SSL_CTX_new(DTLS_method())
        #expect(ctx != nil)
        #expect(parley_ssl_ctx_set_min_proto_version(ctx, DTLS1_2_VERSION) == 1)
        SSL_CTX_free(ctx)
    }

    @Test func sqliteBindsWithTransient() throws {
        var db: OpaquePointer?
        #expect(sqlite3_open(":memory:", &db) == SQLITE_OK)
        defer { sqlite3_close(db) }
        var statement: OpaquePointer?
        #expect(sqlite3_prepare_v2(db, "SELECT ?1", -1, &statement, nil) == SQLITE_OK)
        defer { sqlite3_finalize(statement) }
        #expect(sqlite3_bind_text(statement, 1, "parley", -1, parley_sqlite_transient()) == SQLITE_OK)
        #expect(sqlite3_step(statement) == SQLITE_ROW)
        #expect(String(cString: sqlite3_column_text(statement, 0)) == "parley")
    }

    @Test func epollEventfdAndBatchedUDP() throws {
        let epfd = epoll_create1(Int32(EPOLL_CLOEXEC))
        #expect(epfd >= 0)
        defer { close(epfd) }
        let efd = eventfd(0, Int32(EFD_NONBLOCK))
        #expect(efd >= 0)
        defer { close(efd) }
        var event = epoll_event()
        event.events = EPOLLIN.rawValue
        event.data.fd = efd
        #expect(epoll_ctl(epfd, EPOLL_CTL_ADD, efd, &event) == 0)
        var one: UInt64 = 1
        #expect(write(efd, &one, 8) == 8)
        var ready = epoll_event()
        #expect(epoll_wait(epfd, &ready, 1, 1000) == 1)
        #expect(ready.data.fd == efd)

        // Two UDP datagrams over a loopback socketpair, sent and received in one batch each.
        var fds: [Int32] = [0, 0]
        #expect(socketpair(AF_UNIX, Int32(SOCK_DGRAM.rawValue), 0, &fds) == 0)
        defer { close(fds[0]); close(fds[1]) }
        var payload0: [UInt8] = [1, 2, 3], payload1: [UInt8] = [4, 5]
        var sendHeaders = [parley_mmsghdr](repeating: parley_mmsghdr(), count: 2)
        var sendIovecs = [iovec](repeating: iovec(), count: 2)
        let sent = payload0.withUnsafeMutableBytes { p0 in
            payload1.withUnsafeMutableBytes { p1 in
                sendIovecs[0] = iovec(iov_base: p0.baseAddress, iov_len: p0.count)
                sendIovecs[1] = iovec(iov_base: p1.baseAddress, iov_len: p1.count)
                return sendIovecs.withUnsafeMutableBufferPointer { iov in
                    for i in 0..<2 {
                        sendHeaders[i].msg_hdr.msg_iov = iov.baseAddress! + i
                        sendHeaders[i].msg_hdr.msg_iovlen = 1
                    }
                    return parley_sendmmsg(fds[0], &sendHeaders, 2, 0)
                }
            }
        }
        #expect(sent == 2)
        var buffer0 = [UInt8](repeating: 0, count: 16), buffer1 = [UInt8](repeating: 0, count: 16)
        var receiveHeaders = [parley_mmsghdr](repeating: parley_mmsghdr(), count: 2)
        var receiveIovecs = [iovec](repeating: iovec(), count: 2)
        let received = buffer0.withUnsafeMutableBytes { b0 in
            buffer1.withUnsafeMutableBytes { b1 in
                receiveIovecs[0] = iovec(iov_base: b0.baseAddress, iov_len: b0.count)
                receiveIovecs[1] = iovec(iov_base: b1.baseAddress, iov_len: b1.count)
                return receiveIovecs.withUnsafeMutableBufferPointer { iov in
                    for i in 0..<2 {
                        receiveHeaders[i].msg_hdr.msg_iov = iov.baseAddress! + i
                        receiveHeaders[i].msg_hdr.msg_iovlen = 1
                    }
                    return parley_recvmmsg(fds[1], &receiveHeaders, 2, Int32(MSG_DONTWAIT), nil)
                }
            }
        }
        #expect(received == 2)
        #expect(receiveHeaders[0].msg_len == 3 && receiveHeaders[1].msg_len == 2)
        #expect(Array(buffer0.prefix(3)) == [1, 2, 3])
        #expect(Array(buffer1.prefix(2)) == [4, 5])
    }

    // alsa-lib links, opens its null PCM, and the per-thread log catcher gets alsa-lib's
    // own explanation of a failed open instead of stderr.
    @Test func alsaOpensNullAndCatchesItsLog() {
        let previous = parley_alsa_catch_log()
        defer { parley_alsa_restore_log(previous) }
        var pcm: OpaquePointer?
        #expect(snd_pcm_open(&pcm, "null", SND_PCM_STREAM_PLAYBACK, 0) == 0)
        if let pcm { snd_pcm_close(pcm) }
        var missing: OpaquePointer?
        #expect(snd_pcm_open(&missing, "parley_shim_no_such_pcm", SND_PCM_STREAM_PLAYBACK, 0) == -ENOENT)
        #expect(String(cString: parley_alsa_last_log()).contains("Unknown PCM parley_shim_no_such_pcm"))
    }
}
