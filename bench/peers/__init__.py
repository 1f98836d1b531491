"""wick against its peers (LiteRT, ONNX Runtime, ExecuTorch, PyTorch eager) on the same models,
one run on one machine: ``make bench``.  harness.py drives, worker.py measures (one process per
peer), artifacts.py makes and caches the files, models.py lists the models, report.py writes
docs/performance.md."""
