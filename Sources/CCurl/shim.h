// The thinnest layer Swift needs over libcurl: typed wrappers for the variadic
// curl_easy_setopt / curl_easy_getinfo, which Swift cannot call.
#ifndef BUZZ_CCURL_SHIM_H
#define BUZZ_CCURL_SHIM_H
#include <curl/curl.h>

static inline CURLcode CCurl_setopt_long(CURL *_Nonnull handle, CURLoption option, long value) {
    return curl_easy_setopt(handle, option, value);
}
static inline CURLcode CCurl_setopt_ptr(CURL *_Nonnull handle, CURLoption option, const void *_Nullable value) {
    return curl_easy_setopt(handle, option, value);
}
static inline CURLcode CCurl_setopt_off(CURL *_Nonnull handle, CURLoption option, curl_off_t value) {
    return curl_easy_setopt(handle, option, value);
}
typedef size_t (*CCurl_data_callback)(char *_Nonnull, size_t, size_t, void *_Nullable);
static inline CURLcode CCurl_setopt_callback(CURL *_Nonnull handle, CURLoption option, CCurl_data_callback _Nullable value) {
    return curl_easy_setopt(handle, option, value);
}
static inline CURLcode CCurl_getinfo_long(CURL *_Nonnull handle, CURLINFO info, long *_Nonnull value) {
    return curl_easy_getinfo(handle, info, value);
}
static inline CURLcode CCurl_getinfo_off(CURL *_Nonnull handle, CURLINFO info, curl_off_t *_Nonnull value) {
    return curl_easy_getinfo(handle, info, value);
}
#endif
