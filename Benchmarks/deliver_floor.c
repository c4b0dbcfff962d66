/*
 * The floor under buzz's delivery loop, in C: N POSTs of one fixed JSON body
 * through libcurl on one keep-alive connection, each preceded by the commit
 * buzz makes before a send (the last send's outcome and this send's claim,
 * two rows upserted in one transaction of a WAL-mode SQLite file with
 * synchronous=NORMAL), with the same wait as buzz's CurlEasy: libcurl's multi
 * interface polled for SPIN_US microseconds, then curl_multi_poll.
 *
 * It renders nothing, plans nothing and reads no ledger: what is left when a
 * delivery is only the transfer and the commit the exactly-once rule asks
 * for. run-deliver-bench.sh runs it beside wrk and buzz.
 *
 *   deliver_floor URL N DB [SPIN_US=500] [COMMIT=1]
 *
 * Prints "N SECONDS". Exits 1 on any failed request or SQLite error.
 */
#include <curl/curl.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static size_t discard(char *data, size_t size, size_t count, void *user) {
    (void)data;
    (void)user;
    return size * count;
}

static double seconds(void) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (double)now.tv_sec + (double)now.tv_nsec / 1e9;
}

static void check(sqlite3 *db, int code, const char *what) {
    if (code != SQLITE_OK && code != SQLITE_DONE && code != SQLITE_ROW) {
        fprintf(stderr, "deliver_floor: %s: %s\n", what, sqlite3_errmsg(db));
        exit(1);
    }
}

static void step(sqlite3 *db, sqlite3_stmt *statement, const char *what) {
    check(db, sqlite3_step(statement), what);
    sqlite3_reset(statement);
    sqlite3_clear_bindings(statement);
}

static void upsert(sqlite3 *db, sqlite3_stmt *statement, const char *id, const char *state, long now) {
    sqlite3_bind_text(statement, 1, id, -1, SQLITE_STATIC);
    sqlite3_bind_text(statement, 2, state, -1, SQLITE_STATIC);
    sqlite3_bind_int64(statement, 3, now);
    step(db, statement, "upsert");
}

int main(int argc, char **argv) {
    if (argc < 4) {
        fprintf(stderr, "usage: deliver_floor URL N DB [SPIN_US] [COMMIT]\n");
        return 2;
    }
    const char *url = argv[1];
    long count = atol(argv[2]);
    long spin = argc > 4 ? atol(argv[4]) : 500;
    int commit = argc > 5 ? atoi(argv[5]) : 1;

    sqlite3 *db;
    if (sqlite3_open(argv[3], &db) != SQLITE_OK) {
        fprintf(stderr, "deliver_floor: cannot open %s\n", argv[3]);
        return 1;
    }
    check(db, sqlite3_exec(db,
        "PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL;"
        "CREATE TABLE IF NOT EXISTS delivery (event_id TEXT NOT NULL, channel TEXT NOT NULL,"
        " state TEXT NOT NULL, attempts INTEGER NOT NULL, updated_at INTEGER NOT NULL,"
        " PRIMARY KEY (event_id, channel)) WITHOUT ROWID;", 0, 0, 0), "schema");
    sqlite3_stmt *begin, *end, *row;
    check(db, sqlite3_prepare_v2(db, "BEGIN", -1, &begin, 0), "prepare");
    check(db, sqlite3_prepare_v2(db, "COMMIT", -1, &end, 0), "prepare");
    check(db, sqlite3_prepare_v2(db,
        "INSERT INTO delivery VALUES (?1, 'hook', ?2, 1, ?3) ON CONFLICT DO UPDATE SET"
        " state = excluded.state, updated_at = excluded.updated_at", -1, &row, 0), "prepare");

    if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) return 1;
    CURL *easy = curl_easy_init();
    CURLM *multi = curl_multi_init();
    struct curl_slist *headers = curl_slist_append(NULL, "Content-Type: application/json");
    headers = curl_slist_append(headers, "Expect:");
    const char *body =
        "{\"event\":\"reminder\",\"id\":\"reminder:u1234:2027-03-15:0\",\"title\":\"It's Person 1234's birthday today\","
        "\"body\":\"Person turns 37 today, March 15, 2027.\\nA quick call or a few kind words will make their day.\","
        "\"contact\":{\"id\":\"u1234\",\"name\":\"Person 1234\"},\"occurrence\":\"2027-03-15\",\"days_until\":0,\"locale\":\"en\"}";
    curl_easy_setopt(easy, CURLOPT_URL, url);
    curl_easy_setopt(easy, CURLOPT_HTTPHEADER, headers);
    curl_easy_setopt(easy, CURLOPT_POSTFIELDS, body);
    curl_easy_setopt(easy, CURLOPT_WRITEFUNCTION, discard);
    curl_easy_setopt(easy, CURLOPT_NOSIGNAL, 1L);

    char id[64], previous[64] = "";
    double start = seconds();
    for (long i = 0; i < count; i++) {
        snprintf(id, sizeof id, "reminder:u%ld:2027-03-15:0", i);
        if (commit) {
            step(db, begin, "BEGIN");
            if (previous[0]) upsert(db, row, previous, "sent", i);
            upsert(db, row, id, "sending", i);
            step(db, end, "COMMIT");
        }
        curl_multi_add_handle(multi, easy);
        int running = 1;
        double sent = seconds();
        while (running) {
            if (curl_multi_perform(multi, &running) != CURLM_OK) return 1;
            if (!running) break;
            if ((seconds() - sent) * 1e6 > (double)spin) curl_multi_poll(multi, NULL, 0, 1000, NULL);
        }
        int left;
        CURLMsg *message;
        while ((message = curl_multi_info_read(multi, &left))) {
            long status = 0;
            curl_easy_getinfo(easy, CURLINFO_RESPONSE_CODE, &status);
            if (message->data.result != CURLE_OK || status != 200) {
                fprintf(stderr, "deliver_floor: request %ld: %s (HTTP %ld)\n", i,
                        curl_easy_strerror(message->data.result), status);
                return 1;
            }
        }
        curl_multi_remove_handle(multi, easy);
        memcpy(previous, id, sizeof id);
    }
    if (commit) {
        step(db, begin, "BEGIN");
        upsert(db, row, previous, "sent", count);
        step(db, end, "COMMIT");
    }
    printf("%ld %.6f\n", count, seconds() - start);
    curl_multi_cleanup(multi);
    curl_easy_cleanup(easy);
    curl_slist_free_all(headers);
    sqlite3_close(db);
    return 0;
}
