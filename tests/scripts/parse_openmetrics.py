"""Parses a /metrics scrape with the official Prometheus client's OpenMetrics parser.

Reads the exposition on stdin; prints {"name{labels}": value} as JSON for every sample,
or exits non-zero with the parser's error.
"""
import json
import sys

from prometheus_client.openmetrics.parser import text_string_to_metric_families

samples = {}
for family in text_string_to_metric_families(sys.stdin.read()):
    for s in family.samples:
        labels = ",".join(f'{k}="{v}"' for k, v in sorted(s.labels.items()))
        samples[f"{s.name}{{{labels}}}" if labels else s.name] = s.value
print(json.dumps(samples))
