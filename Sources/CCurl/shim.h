#ifndef PARLEY_CCURL_SHIM_H
#define PARLEY_CCURL_SHIM_H
#include <curl/curl.h>

// curl_easy_setopt and curl_easy_getinfo are variadic and do not import into Swift:
// one typed wrapper per argument kind we pass.
static inline CURLcode parley_curl_setopt_long(CURL *h, CURLoption o, long v) { return curl_easy_setopt(h, o, v); }
static inline CURLcode parley_curl_setopt_string(CURL *h, CURLoption o, const char *v) { return curl_easy_setopt(h, o, v); }
static inline CURLcode parley_curl_setopt_pointer(CURL *h, CURLoption o, void *v) { return curl_easy_setopt(h, o, v); }
static inline CURLcode parley_curl_setopt_slist(CURL *h, CURLoption o, struct curl_slist *v) { return curl_easy_setopt(h, o, v); }
static inline CURLcode parley_curl_setopt_large(CURL *h, CURLoption o, curl_off_t v) { return curl_easy_setopt(h, o, v); }
typedef size_t (*parley_curl_data_callback)(char *data, size_t size, size_t count, void *user);
static inline CURLcode parley_curl_setopt_callback(CURL *h, CURLoption o, parley_curl_data_callback v) { return curl_easy_setopt(h, o, v); }
static inline CURLcode parley_curl_getinfo_long(CURL *h, CURLINFO i, long *v) { return curl_easy_getinfo(h, i, v); }
#endif
