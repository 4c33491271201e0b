"""The report side of the experiments: what is made of a sweep's results once
it has run — the claims' verdicts, the report files, the plots — and the
commands that run a sweep and then report it (p4incast-run, make reproduce).
The running side (experiments/: scenarios, config, the runner and its
executors, the results files) imports nothing from here (DEVELOPERS.md,
"Layers")."""
