/*
 * The canonical ABI of `hookgate:transform@0.1.0` (wit/transform-0.1.0.wit),
 * written out by hand for wasm32: no libc, no wit-bindgen.
 *
 * Every WIT type below is a C struct with the canonical ABI's layout: each
 * field at its own alignment, in WIT order; a string or a list is a
 * (pointer, length) pair of i32s (8 bytes, align 4); a u64 is align 8; an enum
 * with at most 256 cases is one byte; a variant is its discriminant byte, then
 * its payload at the discriminant's size rounded up to the largest payload
 * alignment. The `_Static_assert`s pin every offset and size, so a compiler
 * that laid a struct out differently would fail the build rather than the
 * host's checks.
 *
 * `input` flattens to more than 16 core values, so the host passes it in
 * linear memory: the export takes one i32, a pointer to an `hg_input`. The
 * `answer` flattens to more than one, so the export returns one i32, a pointer
 * to an `hg_answer` in linear memory. Every string and list the host passes
 * in was allocated through `cabi_realloc` (abi.c).
 */
#ifndef HOOKGATE_TRANSFORM_ABI_H
#define HOOKGATE_TRANSFORM_ABI_H

#include <stddef.h>
#include <stdint.h>

#if !defined(__wasm32__)
#error "build for wasm32: clang --target=wasm32-unknown-unknown (see build.sh)"
#endif

/* string: UTF-8 bytes, (ptr, len). */
typedef struct {
    const uint8_t *ptr;
    uint32_t len;
} hg_string;

/* list<u8>. */
typedef struct {
    const uint8_t *ptr;
    uint32_t len;
} hg_bytes;

/* list<string>. */
typedef struct {
    const hg_string *ptr;
    uint32_t len;
} hg_strings;

/* option<string>: discriminant 0 none, 1 some; the string at +4. */
typedef struct {
    uint8_t is_some;
    hg_string value;
} hg_option_string;

/* tuple<string, string>, and list<tuple<string, string>>. */
typedef struct {
    hg_string key;
    hg_string value;
} hg_pair;

typedef struct {
    const hg_pair *ptr;
    uint32_t len;
} hg_pairs;

/* enum destination-kind. */
typedef uint8_t hg_destination;
enum {
    HG_DEST_HTTP = 0,
    HG_DEST_RABBITMQ = 1,
    HG_DEST_NATS = 2,
    HG_DEST_REDIS = 3,
    HG_DEST_SQS = 4,
    HG_DEST_SNS = 5,
    HG_DEST_KINESIS = 6,
};

/* enum method. */
typedef uint8_t hg_method;
enum {
    HG_METHOD_POST = 0,
    HG_METHOD_PUT = 1,
    HG_METHOD_PATCH = 2,
    HG_METHOD_GET = 3,
};

/* record header. */
typedef struct {
    hg_string name;
    hg_string value;
} hg_header;

/* list<header>. */
typedef struct {
    const hg_header *ptr;
    uint32_t len;
} hg_headers;

/* record event. `timestamp_ms` is a u64: align 8, so the record is too. */
typedef struct {
    hg_string id;
    hg_string event_type;
    uint64_t timestamp_ms;
    hg_bytes payload;
    hg_strings channels;
    hg_strings tags;
} hg_event;

/* record endpoint. */
typedef struct {
    hg_string id;
    hg_option_string uid;
    hg_pairs metadata;
    hg_destination destination;
} hg_endpoint;

/* record request. */
typedef struct {
    hg_method method;
    hg_string path;
    hg_headers headers;
    hg_bytes body;
    hg_string content_type;
} hg_request;

/* record input. */
typedef struct {
    hg_event event;
    hg_endpoint endpoint;
    hg_request request;
} hg_input;

/* variant answer: 0 send(request), 1 skip(string); the payload at +4. */
enum {
    HG_ANSWER_SEND = 0,
    HG_ANSWER_SKIP = 1,
};

typedef struct {
    uint8_t tag;
    union {
        hg_request send;
        hg_string skip;
    } of;
} hg_answer;

/* The layout, pinned: (offset, size, alignment) as the canonical ABI computes them. */
_Static_assert(sizeof(void *) == 4, "wasm32 pointers are i32");
_Static_assert(sizeof(hg_string) == 8 && _Alignof(hg_string) == 4, "string");
_Static_assert(sizeof(hg_bytes) == 8 && _Alignof(hg_bytes) == 4, "list<u8>");
_Static_assert(sizeof(hg_strings) == 8 && _Alignof(hg_strings) == 4, "list<string>");
_Static_assert(offsetof(hg_option_string, value) == 4, "option<string> payload");
_Static_assert(sizeof(hg_option_string) == 12 && _Alignof(hg_option_string) == 4,
               "option<string>");
_Static_assert(offsetof(hg_pair, value) == 8 && sizeof(hg_pair) == 16, "tuple<string, string>");
_Static_assert(sizeof(hg_pairs) == 8, "list<tuple<string, string>>");
_Static_assert(offsetof(hg_header, value) == 8 && sizeof(hg_header) == 16 &&
                   _Alignof(hg_header) == 4,
               "header");

_Static_assert(offsetof(hg_event, id) == 0, "event.id");
_Static_assert(offsetof(hg_event, event_type) == 8, "event.event-type");
_Static_assert(offsetof(hg_event, timestamp_ms) == 16, "event.timestamp-ms");
_Static_assert(offsetof(hg_event, payload) == 24, "event.payload");
_Static_assert(offsetof(hg_event, channels) == 32, "event.channels");
_Static_assert(offsetof(hg_event, tags) == 40, "event.tags");
_Static_assert(sizeof(hg_event) == 48 && _Alignof(hg_event) == 8, "event");

_Static_assert(offsetof(hg_endpoint, id) == 0, "endpoint.id");
_Static_assert(offsetof(hg_endpoint, uid) == 8, "endpoint.uid");
_Static_assert(offsetof(hg_endpoint, metadata) == 20, "endpoint.metadata");
_Static_assert(offsetof(hg_endpoint, destination) == 28, "endpoint.destination");
_Static_assert(sizeof(hg_endpoint) == 32 && _Alignof(hg_endpoint) == 4, "endpoint");

_Static_assert(offsetof(hg_request, method) == 0, "request.method");
_Static_assert(offsetof(hg_request, path) == 4, "request.path");
_Static_assert(offsetof(hg_request, headers) == 12, "request.headers");
_Static_assert(offsetof(hg_request, body) == 20, "request.body");
_Static_assert(offsetof(hg_request, content_type) == 28, "request.content-type");
_Static_assert(sizeof(hg_request) == 36 && _Alignof(hg_request) == 4, "request");

_Static_assert(offsetof(hg_input, event) == 0, "input.event");
_Static_assert(offsetof(hg_input, endpoint) == 48, "input.endpoint");
_Static_assert(offsetof(hg_input, request) == 80, "input.request");
_Static_assert(sizeof(hg_input) == 120 && _Alignof(hg_input) == 8, "input");

_Static_assert(offsetof(hg_answer, of) == 4, "answer payload");
_Static_assert(sizeof(hg_answer) == 40 && _Alignof(hg_answer) == 4, "answer");

/* The export's name: `<interface>@<version>#<function>`. */
#define HG_TRANSFORM_EXPORT "hookgate:transform/transform@0.1.0#transform"

/*
 * Memory (abi.c). One bump heap, grown with `memory.grow`: nothing is freed
 * during a call, and the whole heap is reclaimed when the host lowers the next
 * call's input (the first `cabi_realloc` after `hg_call_done`). Traps when the
 * host's memory limit refuses to grow.
 */
void *hg_alloc(uint32_t size, uint32_t align);

/* Marks the end of a call: the host has the answer's pointers and reads them
 * before it allocates anything for the next call. */
void hg_call_done(void);

/* A string of a C literal, e.g. HG_STR("test event"). */
#define HG_STR(s) ((hg_string){(const uint8_t *)(s), (uint32_t)(sizeof(s) - 1)})

static inline int hg_starts_with(hg_string s, hg_string prefix) {
    if (s.len < prefix.len) {
        return 0;
    }
    for (uint32_t i = 0; i < prefix.len; i++) {
        if (s.ptr[i] != prefix.ptr[i]) {
            return 0;
        }
    }
    return 1;
}

static inline int hg_equals(hg_string a, hg_string b) {
    return a.len == b.len && hg_starts_with(a, b);
}

#endif
