/*
 * envelope-c: a hookgate transform in C. It wraps each event's payload in an
 * envelope,
 *
 *     {"type":"<event type>","id":"<event id>","endpoint":"<endpoint id>","data":<payload>}
 *
 * (`data` is the payload's bytes as the platform sent them, or `null` when it
 * is empty), sent as `application/json` with the request's own method, path
 * and headers plus `x-envelope: c`; and it skips events whose type starts
 * with `test.`, with the reason "test event".
 *
 * The canonical ABI layer is abi.h (the WIT types) and abi.c (the allocator).
 */
#include "abi.h"

/* The answer the export returns a pointer to: static, so it outlives the call. */
static hg_answer answer;

/* Bytes `s` takes as a JSON string's contents. */
static uint32_t json_escaped_len(hg_string s) {
    uint32_t n = 0;
    for (uint32_t i = 0; i < s.len; i++) {
        uint8_t c = s.ptr[i];
        if (c == '"' || c == '\\' || c == '\b' || c == '\f' || c == '\n' || c == '\r' ||
            c == '\t') {
            n += 2;
        } else if (c < 0x20) {
            n += 6; /* \u00XX */
        } else {
            n += 1;
        }
    }
    return n;
}

/* A growing output buffer with room already allocated. */
typedef struct {
    uint8_t *at;
} cursor;

static void put(cursor *w, const void *bytes, uint32_t len) {
    __builtin_memcpy(w->at, bytes, len);
    w->at += len;
}

static void put_str(cursor *w, hg_string s) {
    put(w, s.ptr, s.len);
}

static void put_json_string(cursor *w, hg_string s) {
    static const char hex[] = "0123456789abcdef";
    *w->at++ = '"';
    for (uint32_t i = 0; i < s.len; i++) {
        uint8_t c = s.ptr[i];
        char short_escape = 0;
        switch (c) {
        case '"': short_escape = '"'; break;
        case '\\': short_escape = '\\'; break;
        case '\b': short_escape = 'b'; break;
        case '\f': short_escape = 'f'; break;
        case '\n': short_escape = 'n'; break;
        case '\r': short_escape = 'r'; break;
        case '\t': short_escape = 't'; break;
        default: break;
        }
        if (short_escape) {
            *w->at++ = '\\';
            *w->at++ = (uint8_t)short_escape;
        } else if (c < 0x20) {
            put(w, "\\u00", 4);
            *w->at++ = (uint8_t)hex[c >> 4];
            *w->at++ = (uint8_t)hex[c & 15];
        } else {
            *w->at++ = c;
        }
    }
    *w->at++ = '"';
}

/* Whether the payload is empty, or only JSON whitespace. */
static int payload_is_empty(hg_bytes p) {
    for (uint32_t i = 0; i < p.len; i++) {
        uint8_t c = p.ptr[i];
        if (c != ' ' && c != '\t' && c != '\n' && c != '\r') {
            return 0;
        }
    }
    return 1;
}

static hg_bytes envelope(const hg_input *in) {
    const hg_string type_key = HG_STR("{\"type\":");
    const hg_string id_key = HG_STR(",\"id\":");
    const hg_string endpoint_key = HG_STR(",\"endpoint\":");
    const hg_string data_key = HG_STR(",\"data\":");
    const hg_string null = HG_STR("null");
    hg_string data = payload_is_empty(in->event.payload)
                         ? null
                         : (hg_string){in->event.payload.ptr, in->event.payload.len};

    /* Sized first, written once: "2 +" for each string's quotes. */
    uint64_t len = (uint64_t)type_key.len + 2 + json_escaped_len(in->event.event_type) +
                   id_key.len + 2 + json_escaped_len(in->event.id) + endpoint_key.len + 2 +
                   json_escaped_len(in->endpoint.id) + data_key.len + data.len + 1;
    if (len > UINT32_MAX) {
        __builtin_trap();
    }
    uint8_t *body = hg_alloc((uint32_t)len, 1);
    cursor w = {body};
    put_str(&w, type_key);
    put_json_string(&w, in->event.event_type);
    put_str(&w, id_key);
    put_json_string(&w, in->event.id);
    put_str(&w, endpoint_key);
    put_json_string(&w, in->endpoint.id);
    put_str(&w, data_key);
    put_str(&w, data);
    *w.at++ = '}';
    if (w.at != body + len) {
        __builtin_trap();
    }
    return (hg_bytes){body, (uint32_t)len};
}

/* The request's headers without any `x-envelope`, then `x-envelope: c`. The
 * strings stay where the host put them: an answer may point anywhere in
 * linear memory. */
static hg_headers with_envelope_header(hg_headers in) {
    const hg_string name = HG_STR("x-envelope");
    hg_header *out = hg_alloc((in.len + 1) * (uint32_t)sizeof(hg_header), _Alignof(hg_header));
    uint32_t n = 0;
    for (uint32_t i = 0; i < in.len; i++) {
        if (!hg_equals(in.ptr[i].name, name)) {
            out[n++] = in.ptr[i];
        }
    }
    out[n++] = (hg_header){name, HG_STR("c")};
    return (hg_headers){out, n};
}

__attribute__((export_name(HG_TRANSFORM_EXPORT)))
hg_answer *transform(const hg_input *in) {
    if (hg_starts_with(in->event.event_type, HG_STR("test."))) {
        answer.tag = HG_ANSWER_SKIP;
        answer.of.skip = HG_STR("test event");
    } else {
        answer.tag = HG_ANSWER_SEND;
        answer.of.send = (hg_request){
            .method = in->request.method,
            .path = in->request.path,
            .headers = with_envelope_header(in->request.headers),
            .body = envelope(in),
            .content_type = HG_STR("application/json"),
        };
    }
    hg_call_done();
    return &answer;
}
