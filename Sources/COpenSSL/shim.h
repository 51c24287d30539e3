#ifndef PARLEY_COPENSSL_SHIM_H
#define PARLEY_COPENSSL_SHIM_H
#include <openssl/ssl.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>
#include <openssl/core_names.h>
#include <openssl/params.h>
#include <openssl/x509.h>
#include <openssl/ec.h>
#include <openssl/bio.h>
#include <openssl/crypto.h>

// Function-like macros do not import into Swift; these wrappers stand in for them.
static inline void parley_openssl_free(void *p) { OPENSSL_free(p); }
static inline long parley_ssl_ctx_set_min_proto_version(SSL_CTX *ctx, int v) { return SSL_CTX_set_min_proto_version(ctx, v); }
static inline long parley_ssl_ctx_set_max_proto_version(SSL_CTX *ctx, int v) { return SSL_CTX_set_max_proto_version(ctx, v); }
static inline long parley_ssl_set_tlsext_host_name(SSL *ssl, const char *name) { return SSL_set_tlsext_host_name(ssl, name); }
static inline long parley_dtls_set_link_mtu(SSL *ssl, long mtu) { return SSL_ctrl(ssl, DTLS_CTRL_SET_LINK_MTU, mtu, NULL); }
static inline long parley_bio_get_mem_data(BIO *b, char **pp) { return BIO_get_mem_data(b, pp); }
static inline int parley_bio_pending(BIO *b) { return (int)BIO_pending(b); }
static inline long parley_ssl_set_mode(SSL *ssl, long mode) { return SSL_set_mode(ssl, mode); }
static inline long parley_dtls_get_timeout(SSL *ssl, struct timeval *tv) { return DTLSv1_get_timeout(ssl, tv); }
static inline long parley_dtls_handle_timeout(SSL *ssl) { return DTLSv1_handle_timeout(ssl); }
// MARK: DTLS over memory BIOs (ParleyCrypto's DTLSConnection)
#include <openssl/srtp.h>
#include <sys/time.h>

// A memory BIO reports "retry" instead of end-of-file when empty, so an empty read
// means "wait for the next datagram", not "peer went away".
static inline long parley_bio_set_mem_eof_return(BIO *b, long v) { return BIO_set_mem_eof_return(b, v); }

// OpenSSL's DTLS retransmission timer reads the real clock. This callback sets every
// timer period to one hour, so OpenSSL never retransmits on its own; the Swift side
// decides when (on the caller's clock) and then expires the timer explicitly.
static inline unsigned int parley_dtls_timer_far_future(SSL *s, unsigned int previous_us) {
    (void)s; (void)previous_us;
    return 3600u * 1000000u;
}
static inline void parley_dtls_use_far_future_timer(SSL *s) { DTLS_set_timer_cb(s, parley_dtls_timer_far_future); }

// OpenSSL 3.0 and 3.1 announce their timer to the read BIO with
// BIO_CTRL_DGRAM_SET_NEXT_TIMEOUT and a pointer to the live `struct timeval` deadline
// inside the SSL object. This BIO callback remembers that pointer in *slot.
static inline long parley_dtls_timer_field_callback(BIO *b, int oper, const char *argp, size_t len,
                                                    int argi, long argl, int ret, size_t *processed) {
    (void)len; (void)argl; (void)processed;
    if (oper == BIO_CB_CTRL && argi == BIO_CTRL_DGRAM_SET_NEXT_TIMEOUT && argp != NULL) {
        void **slot = (void **)BIO_get_callback_arg(b);
        if (slot != NULL) *slot = (void *)argp;
    }
    return ret;
}
static inline void parley_dtls_watch_timer_field(BIO *rbio, void **slot) {
    BIO_set_callback_arg(rbio, (char *)slot);
    BIO_set_callback_ex(rbio, parley_dtls_timer_field_callback);
}
// True when the linked libssl passes the live deadline (3.0.x, 3.1.x). From 3.2 the
// pointer is to a temporary copy and must not be written.
static inline int parley_dtls_timer_field_is_live(void) {
    unsigned long v = OpenSSL_version_num() >> 20;
    return v == 0x300 || v == 0x301;
}
// Moves a running timer's deadline into the past so DTLSv1_handle_timeout retransmits
// now. Returns 0 (and does nothing) when no timer is running.
static inline int parley_dtls_expire_timer_field(void *field) {
    struct timeval *tv = (struct timeval *)field;
    if (tv == NULL || (tv->tv_sec == 0 && tv->tv_usec == 0)) return 0;
    tv->tv_sec = 0;
    tv->tv_usec = 1;
    return 1;
}
static inline int parley_ssl_verify_accept_any(int preverify_ok, X509_STORE_CTX *ctx) {
    (void)preverify_ok; (void)ctx;
    return 1;
}
static inline void parley_ssl_ctx_verify_peer_accepting_self_signed(SSL_CTX *ctx) {
    SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, parley_ssl_verify_accept_any);
}
static inline uint64_t parley_ssl_set_option_no_query_mtu(SSL *ssl) { return SSL_set_options(ssl, SSL_OP_NO_QUERY_MTU); }
// DTLS-SRTP peers do not resume sessions; a NewSessionTicket only makes the last flight bigger.
static inline uint64_t parley_ssl_ctx_set_option_no_ticket(SSL_CTX *ctx) { return SSL_CTX_set_options(ctx, SSL_OP_NO_TICKET); }
// MARK: PEM keys (ParleyCrypto's ES256 and RS256 keys)
#include <openssl/pem.h>
#include <openssl/rsa.h>
// Passphrase callback that refuses: an encrypted PEM fails instead of prompting on a tty.
static inline int parley_pem_no_passphrase(char *buf, int size, int rwflag, void *u) {
    (void)buf; (void)size; (void)rwflag; (void)u;
    return -1;
}
// MARK: TLS over memory BIOs (ParleyCrypto's TLSConnection)
#include <openssl/x509v3.h>
static inline void parley_ssl_ctx_set_no_passphrase(SSL_CTX *ctx) { SSL_CTX_set_default_passwd_cb(ctx, parley_pem_no_passphrase); }
static inline void parley_ssl_ctx_verify_peer(SSL_CTX *ctx) { SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, NULL); }
static inline uint64_t parley_ssl_ctx_set_option_no_renegotiation(SSL_CTX *ctx) { return SSL_CTX_set_options(ctx, SSL_OP_NO_RENEGOTIATION); }
#endif
