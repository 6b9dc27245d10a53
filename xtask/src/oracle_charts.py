"""Renders charts with Helm's own engine (helm-python-sdk): reads JSON cases on stdin
[{"key", "chart", "values": [paths], "name", "namespace"}], prints JSON
{key: {"render": {template: text} | null, "manifest": text | null, "error": message | null}}."""
import json
import sys

import helm_python as h


def merge(base, override):
    out = dict(base)
    for key, value in override.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = merge(out[key], value)
        else:
            out[key] = value
    return out


results = {}
for case in json.load(sys.stdin):
    entry = {"render": None, "manifest": None, "error": None}
    try:
        values = {}
        for path in case["values"]:
            with open(path, encoding="utf-8") as fh:
                values = merge(values, h.values_from_yaml(fh.read()) or {})
        chart = h.Chart.load(case["chart"])
        entry["render"] = chart.render(values, name=case["name"], namespace=case["namespace"])
        config = h.Config(storage_driver="memory", namespace=case["namespace"])
        release = config.install(chart, case["name"], values, namespace=case["namespace"], dry_run="client")
        entry["manifest"] = release["manifest"]
    except Exception as e:  # the SDK raises its own error classes
        entry["error"] = str(e)
    results[case["key"]] = entry
json.dump(results, sys.stdout)
