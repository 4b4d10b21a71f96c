"""Parses a /metrics scrape with the official Prometheus client's parser for the
format its Content-Type declares.

Usage: parse_metrics.py CONTENT_TYPE < exposition

- `application/openmetrics-text; version=1.0.0` (or 0.0.1):
  prometheus_client.openmetrics.parser.text_string_to_metric_families
- `text/plain; version=0.0.4` (or no version): the classic text format,
  prometheus_client.parser.text_string_to_metric_families

Prints {"format": ..., "families": {family: {"type": t, "samples": {"name{labels}": v}}}}
as JSON, or exits non-zero with the parser's error. A body that only parses as some
other format than the one declared fails here, or (the text parser being lenient)
shows up as samples in the wrong family, which the caller checks.
"""
import json
import sys

from prometheus_client import parser as text_parser
from prometheus_client.openmetrics import parser as openmetrics_parser


def media_type(header):
    """(type/subtype, {param: value}) of a Content-Type header, lower-cased."""
    parts = [p.strip() for p in header.split(";")]
    params = {}
    for p in parts[1:]:
        if "=" in p:
            k, v = p.split("=", 1)
            params[k.strip().lower()] = v.strip().strip('"')
    return parts[0].lower(), params


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: parse_metrics.py CONTENT_TYPE < exposition")
    kind, params = media_type(sys.argv[1])
    version = params.get("version")
    if kind == "application/openmetrics-text" and version in ("1.0.0", "0.0.1"):
        parse, fmt = openmetrics_parser.text_string_to_metric_families, f"openmetrics-{version}"
    elif kind == "text/plain" and version in (None, "0.0.4"):
        parse, fmt = text_parser.text_string_to_metric_families, "text-0.0.4"
    else:
        sys.exit(f"not a Prometheus exposition content type: {sys.argv[1]!r}")
    families = {}
    for family in parse(sys.stdin.read()):
        samples = {}
        for s in family.samples:
            labels = ",".join(f'{k}="{v}"' for k, v in sorted(s.labels.items()))
            # Floats throughout: the OpenMetrics parser keeps integers as int.
            samples[f"{s.name}{{{labels}}}" if labels else s.name] = float(s.value)
        families[family.name] = {"type": family.type, "samples": samples}
    print(json.dumps({"format": fmt, "families": families}))


main()
