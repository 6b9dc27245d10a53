"""Renders snippet cases with Helm's own engine (helm-python-sdk): reads JSON cases on stdin
[{"name", "values", "template"}], prints JSON {name: {"ok": text} | {"err": message}}."""
import json
import os
import sys
import tempfile

import helm_python as h

cases = json.load(sys.stdin)
results = {}
with tempfile.TemporaryDirectory() as root:
    chart = os.path.join(root, "probe")
    os.makedirs(os.path.join(chart, "templates"))
    with open(os.path.join(chart, "Chart.yaml"), "w") as f:
        f.write("apiVersion: v2\nname: probe\nversion: 0.1.0\n")
    for case in cases:
        with open(os.path.join(chart, "values.yaml"), "w") as f:
            f.write(case["values"])
        with open(os.path.join(chart, "templates", "t.yaml"), "w") as f:
            f.write(case["template"])
        try:
            out = h.Chart.load(chart).render({}, name="release-name", namespace="default")
            results[case["name"]] = {"ok": out.get("probe/templates/t.yaml", "")}
        except Exception as e:  # the SDK raises its own error classes
            results[case["name"]] = {"err": str(e)}
json.dump(results, sys.stdout)
