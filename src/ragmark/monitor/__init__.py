"""``ragmark monitor``: follow a system in production. Each invocation reads the records
of a source (a growing JSONL log of outputs, a folder or file of OTLP JSON traces, the
receiver's spool) that no earlier window evaluated (:mod:`ragmark.monitor.sources`),
evaluates them as one window and records it in the run history with the source's cursor
(:mod:`ragmark.monitor.windows`), and reports the trend and the drift gate. The OTLP/HTTP
receiver (:mod:`ragmark.monitor.receiver`) writes the spool an instrumented application
exports to."""
