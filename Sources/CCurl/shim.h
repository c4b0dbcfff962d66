// The thinnest layer Swift needs over libcurl.
//
// libcurl is not linked into buzz: it and the ~35 shared libraries it pulls in
// take about 5 ms to load, which commands that never touch the network should
// not pay. CurlSupport (CurlLibrary.swift) loads libcurl.so.4 with dlopen on
// first use and fills a CCurl_api with its entry points; the wrappers below
// call through that table with the exact C prototypes (the setopt / getinfo
// ones also give Swift typed forms of those variadic functions, which Swift
// cannot call). Types and constants still come from <curl/curl.h>.
#ifndef BUZZ_CCURL_SHIM_H
#define BUZZ_CCURL_SHIM_H
#include <curl/curl.h>

typedef struct CCurl_api {
    void *_Nullable global_init;
    void *_Nullable easy_init;
    void *_Nullable easy_cleanup;
    void *_Nullable easy_strerror;
    void *_Nullable easy_setopt;
    void *_Nullable easy_getinfo;
    void *_Nullable slist_append;
    void *_Nullable slist_free_all;
    void *_Nullable multi_init;
    void *_Nullable multi_cleanup;
    void *_Nullable multi_add_handle;
    void *_Nullable multi_remove_handle;
    void *_Nullable multi_perform;
    void *_Nullable multi_poll;
    void *_Nullable multi_info_read;
    void *_Nullable multi_strerror;
} CCurl_api;

static inline CURLcode CCurl_global_init(const CCurl_api *_Nonnull api, long flags) {
    return ((CURLcode (*)(long))api->global_init)(flags);
}
static inline CURL *_Nullable CCurl_easy_init(const CCurl_api *_Nonnull api) {
    return ((CURL *(*)(void))api->easy_init)();
}
static inline void CCurl_easy_cleanup(const CCurl_api *_Nonnull api, CURL *_Nonnull handle) {
    ((void (*)(CURL *))api->easy_cleanup)(handle);
}
static inline const char *_Nonnull CCurl_easy_strerror(const CCurl_api *_Nonnull api, CURLcode code) {
    return ((const char *(*)(CURLcode))api->easy_strerror)(code);
}
static inline struct curl_slist *_Nullable CCurl_slist_append(const CCurl_api *_Nonnull api,
                                                             struct curl_slist *_Nullable list,
                                                             const char *_Nonnull value) {
    return ((struct curl_slist *(*)(struct curl_slist *, const char *))api->slist_append)(list, value);
}
static inline void CCurl_slist_free_all(const CCurl_api *_Nonnull api, struct curl_slist *_Nullable list) {
    ((void (*)(struct curl_slist *))api->slist_free_all)(list);
}

static inline CURLM *_Nullable CCurl_multi_init(const CCurl_api *_Nonnull api) {
    return ((CURLM *(*)(void))api->multi_init)();
}
static inline CURLMcode CCurl_multi_cleanup(const CCurl_api *_Nonnull api, CURLM *_Nonnull multi) {
    return ((CURLMcode (*)(CURLM *))api->multi_cleanup)(multi);
}
static inline CURLMcode CCurl_multi_add_handle(const CCurl_api *_Nonnull api, CURLM *_Nonnull multi,
                                               CURL *_Nonnull handle) {
    return ((CURLMcode (*)(CURLM *, CURL *))api->multi_add_handle)(multi, handle);
}
static inline CURLMcode CCurl_multi_remove_handle(const CCurl_api *_Nonnull api, CURLM *_Nonnull multi,
                                                  CURL *_Nonnull handle) {
    return ((CURLMcode (*)(CURLM *, CURL *))api->multi_remove_handle)(multi, handle);
}
static inline CURLMcode CCurl_multi_perform(const CCurl_api *_Nonnull api, CURLM *_Nonnull multi,
                                            int *_Nonnull running) {
    return ((CURLMcode (*)(CURLM *, int *))api->multi_perform)(multi, running);
}
/// Sleeps until there is something to do, at most `timeout_ms` (libcurl shortens it to its own timeouts).
static inline CURLMcode CCurl_multi_poll(const CCurl_api *_Nonnull api, CURLM *_Nonnull multi, int timeout_ms) {
    int ready = 0;
    return ((CURLMcode (*)(CURLM *, struct curl_waitfd *, unsigned int, int, int *))api->multi_poll)(
        multi, NULL, 0, timeout_ms, &ready);
}
/// The result of `handle`'s finished transfer, from the multi handle's messages
/// (CURLMsg's union is awkward in Swift); `found` is 0 when there is none.
static inline CURLcode CCurl_multi_result(const CCurl_api *_Nonnull api, CURLM *_Nonnull multi,
                                          CURL *_Nonnull handle, int *_Nonnull found) {
    int queued = 0;
    CURLMsg *message;
    *found = 0;
    CURLcode result = CURLE_OK;
    while ((message = ((CURLMsg *(*)(CURLM *, int *))api->multi_info_read)(multi, &queued)) != NULL) {
        if (message->msg == CURLMSG_DONE && message->easy_handle == handle) {
            *found = 1;
            result = message->data.result;
        }
    }
    return result;
}
static inline const char *_Nonnull CCurl_multi_strerror(const CCurl_api *_Nonnull api, CURLMcode code) {
    return ((const char *(*)(CURLMcode))api->multi_strerror)(code);
}

typedef CURLcode (*CCurl_setopt_fn)(CURL *, CURLoption, ...);
typedef CURLcode (*CCurl_getinfo_fn)(CURL *, CURLINFO, ...);

static inline CURLcode CCurl_setopt_long(const CCurl_api *_Nonnull api, CURL *_Nonnull handle, CURLoption option,
                                         long value) {
    return ((CCurl_setopt_fn)api->easy_setopt)(handle, option, value);
}
static inline CURLcode CCurl_setopt_ptr(const CCurl_api *_Nonnull api, CURL *_Nonnull handle, CURLoption option,
                                        const void *_Nullable value) {
    return ((CCurl_setopt_fn)api->easy_setopt)(handle, option, value);
}
static inline CURLcode CCurl_setopt_off(const CCurl_api *_Nonnull api, CURL *_Nonnull handle, CURLoption option,
                                        curl_off_t value) {
    return ((CCurl_setopt_fn)api->easy_setopt)(handle, option, value);
}
typedef size_t (*CCurl_data_callback)(char *_Nonnull, size_t, size_t, void *_Nullable);
static inline CURLcode CCurl_setopt_callback(const CCurl_api *_Nonnull api, CURL *_Nonnull handle,
                                             CURLoption option, CCurl_data_callback _Nullable value) {
    return ((CCurl_setopt_fn)api->easy_setopt)(handle, option, value);
}
typedef int (*CCurl_debug_callback)(CURL *_Nonnull, curl_infotype, char *_Nonnull, size_t, void *_Nullable);
static inline CURLcode CCurl_setopt_debug(const CCurl_api *_Nonnull api, CURL *_Nonnull handle,
                                          CCurl_debug_callback _Nullable value) {
    return ((CCurl_setopt_fn)api->easy_setopt)(handle, CURLOPT_DEBUGFUNCTION, value);
}
static inline CURLcode CCurl_getinfo_long(const CCurl_api *_Nonnull api, CURL *_Nonnull handle, CURLINFO info,
                                          long *_Nonnull value) {
    return ((CCurl_getinfo_fn)api->easy_getinfo)(handle, info, value);
}
#endif
