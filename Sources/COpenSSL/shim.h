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
#endif
