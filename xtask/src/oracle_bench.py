"""Times Helm's in-process render: argv = chart values.yaml runs; prints median seconds."""
import statistics
import sys
import time

import helm_python as h

chart_path, values_path, runs = sys.argv[1], sys.argv[2], int(sys.argv[3])
with open(values_path, encoding="utf-8") as fh:
    values = h.values_from_yaml(fh.read()) or {}
chart = h.Chart.load(chart_path)
chart.render(values, name="kubeflow-trainer", namespace="kubeflow-system")
samples = []
for _ in range(runs):
    start = time.perf_counter()
    chart.render(values, name="kubeflow-trainer", namespace="kubeflow-system")
    samples.append(time.perf_counter() - start)
print(statistics.median(samples))
