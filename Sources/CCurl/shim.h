// Typed wrappers for libcurl's variadic functions: Swift cannot call C varargs.
#ifndef FAVFS_CCURL_SHIM_H
#define FAVFS_CCURL_SHIM_H

#include <curl/curl.h>
#include <sys/types.h>
#include <string.h>

typedef size_t (*favfs_curl_data_cb)(char *ptr, size_t size, size_t nmemb, void *userdata);
typedef int (*favfs_curl_xferinfo_cb)(void *userdata, curl_off_t dltotal, curl_off_t dlnow,
                                      curl_off_t ultotal, curl_off_t ulnow);
typedef int (*favfs_curl_seek_cb)(void *userdata, curl_off_t offset, int origin);

static inline CURLcode favfs_easy_setopt_long(CURL *h, CURLoption o, long v) { return curl_easy_setopt(h, o, v); }
static inline CURLcode favfs_easy_setopt_ptr(CURL *h, CURLoption o, void *v) { return curl_easy_setopt(h, o, v); }
static inline CURLcode favfs_easy_setopt_string(CURL *h, CURLoption o, const char *v) { return curl_easy_setopt(h, o, v); }
static inline CURLcode favfs_easy_setopt_off_t(CURL *h, CURLoption o, curl_off_t v) { return curl_easy_setopt(h, o, v); }
static inline CURLcode favfs_easy_setopt_slist(CURL *h, CURLoption o, struct curl_slist *v) { return curl_easy_setopt(h, o, v); }
static inline CURLcode favfs_easy_setopt_data_cb(CURL *h, CURLoption o, favfs_curl_data_cb v) { return curl_easy_setopt(h, o, v); }
static inline CURLcode favfs_easy_setopt_seek_cb(CURL *h, CURLoption o, favfs_curl_seek_cb v) { return curl_easy_setopt(h, o, v); }
static inline CURLcode favfs_easy_setopt_xferinfo_cb(CURL *h, CURLoption o, favfs_curl_xferinfo_cb v) { return curl_easy_setopt(h, o, v); }

static inline CURLMcode favfs_multi_setopt_long(CURLM *m, CURLMoption o, long v) { return curl_multi_setopt(m, o, v); }
static inline CURLMcode favfs_multi_setopt_ptr(CURLM *m, CURLMoption o, void *v) { return curl_multi_setopt(m, o, v); }

static inline CURLcode favfs_easy_getinfo_long(CURL *h, CURLINFO i, long *v) { return curl_easy_getinfo(h, i, v); }
static inline CURLcode favfs_easy_getinfo_string(CURL *h, CURLINFO i, char **v) { return curl_easy_getinfo(h, i, v); }
static inline CURLcode favfs_easy_getinfo_off_t(CURL *h, CURLINFO i, curl_off_t *v) { return curl_easy_getinfo(h, i, v); }
static inline CURLcode favfs_easy_getinfo_ptr(CURL *h, CURLINFO i, void **v) { return curl_easy_getinfo(h, i, v); }

// CURLMsg.data is a union; Swift imports it, but a helper keeps the call sites plain.
static inline CURLcode favfs_msg_result(CURLMsg *m) { return m->data.result; }

// Function-like or cast macros Swift does not import.
static const long favfs_auth_any = (long)CURLAUTH_ANY;
static const long favfs_auth_basic = (long)CURLAUTH_BASIC;
static const long favfs_auth_digest = (long)CURLAUTH_DIGEST;
static const long favfs_global_all = CURL_GLOBAL_ALL;
static const int favfs_error_size = CURL_ERROR_SIZE;
static const size_t favfs_readfunc_abort = CURL_READFUNC_ABORT;
static const size_t favfs_readfunc_pause = CURL_READFUNC_PAUSE;
static const int favfs_pause_cont = CURLPAUSE_CONT;
static const int favfs_seekfunc_ok = CURL_SEEKFUNC_OK;
static const int favfs_seekfunc_fail = CURL_SEEKFUNC_FAIL;

// SSH host keys (CURLOPT_SSH_KEYFUNCTION): accept exactly what libcurl's default accepts (a key
// that matches the known_hosts file) and record the verdict, so that a refused key can be
// reported as unknown (CURLKHMATCH_MISSING) or changed (CURLKHMATCH_MISMATCH), with the key the
// server offered (copied: libcurl's struct is gone once the callback returns) for its fingerprint.
struct favfs_ssh_key_report {
    int verdict;          // a CURLKHMATCH_* value, -1 before the check
    int keytype;          // a CURLKHTYPE_* value
    size_t length;        // bytes in key (0: none, or longer than key)
    unsigned char key[4096];
};
static inline int favfs_ssh_keyfunc(CURL *easy, const struct curl_khkey *knownkey, const struct curl_khkey *foundkey,
                             enum curl_khmatch match, void *clientp) {
    (void)easy; (void)knownkey;
    struct favfs_ssh_key_report *report = (struct favfs_ssh_key_report *)clientp;
    if (report) {
        report->verdict = (int)match;
        report->length = 0;
        if (foundkey && foundkey->key && foundkey->len > 0 && foundkey->len <= sizeof(report->key)) {
            memcpy(report->key, foundkey->key, foundkey->len);
            report->length = foundkey->len;
            report->keytype = (int)foundkey->keytype;
        }
    }
    return match == CURLKHMATCH_OK ? CURLKHSTAT_FINE : CURLKHSTAT_REJECT;
}
static inline CURLcode favfs_easy_setopt_ssh_keyfunc(CURL *h, struct favfs_ssh_key_report *report) {
    CURLcode c = curl_easy_setopt(h, CURLOPT_SSH_KEYFUNCTION, favfs_ssh_keyfunc);
    return c == CURLE_OK ? curl_easy_setopt(h, CURLOPT_SSH_KEYDATA, (void *)report) : c;
}
static const int favfs_khmatch_ok = CURLKHMATCH_OK;
static const int favfs_khmatch_mismatch = CURLKHMATCH_MISMATCH;
static const int favfs_khmatch_missing = CURLKHMATCH_MISSING;

#endif
