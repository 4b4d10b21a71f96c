"""An OTLP/HTTP trace receiver for the tests, on the official
`opentelemetry-proto` messages: accepts `POST /v1/traces` (protobuf), decodes
each `ExportTraceServiceRequest`, and prints one JSON line per span on stdout
(after a first line with the port it listens on, on 127.0.0.1).

Each line: name, kind, trace_id, span_id, parent_span_id (hex, "" for none),
service (the resource's service.name), attributes (key -> value) and status
code ("unset", "ok", "error").
"""

import json
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from google.protobuf.json_format import MessageToDict
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)
from opentelemetry.proto.trace.v1.trace_pb2 import Span, Status

STATUS = {Status.STATUS_CODE_UNSET: "unset", Status.STATUS_CODE_OK: "ok", Status.STATUS_CODE_ERROR: "error"}


def value(any_value):
    """An AnyValue as plain JSON."""
    kind = any_value.WhichOneof("value")
    if kind is None:
        return None
    if kind in ("array_value", "kvlist_value"):
        return MessageToDict(getattr(any_value, kind))
    return getattr(any_value, kind)


def attributes(kvs):
    return {kv.key: value(kv.value) for kv in kvs}


class Handler(BaseHTTPRequestHandler):
    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("content-length", "0")))
        if self.path != "/v1/traces" or self.headers.get("content-type") != "application/x-protobuf":
            self.send_response(404 if self.path != "/v1/traces" else 415)
            self.end_headers()
            return
        request = ExportTraceServiceRequest()
        request.ParseFromString(body)
        lines = []
        for resource_spans in request.resource_spans:
            service = attributes(resource_spans.resource.attributes).get("service.name")
            for scope_spans in resource_spans.scope_spans:
                for span in scope_spans.spans:
                    lines.append(json.dumps({
                        "name": span.name,
                        "kind": Span.SpanKind.Name(span.kind),
                        "trace_id": span.trace_id.hex(),
                        "span_id": span.span_id.hex(),
                        "parent_span_id": span.parent_span_id.hex(),
                        "service": service,
                        "attributes": attributes(span.attributes),
                        "status": STATUS.get(span.status.code, "unset"),
                    }))
        if lines:
            sys.stdout.write("\n".join(lines) + "\n")
            sys.stdout.flush()
        answer = ExportTraceServiceResponse().SerializeToString()
        self.send_response(200)
        self.send_header("content-type", "application/x-protobuf")
        self.send_header("content-length", str(len(answer)))
        self.end_headers()
        self.wfile.write(answer)

    def log_message(self, *args):
        pass


def main():
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    print(server.server_address[1], flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
