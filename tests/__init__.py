"""ember's tests, laid out as the package: tests/<name>/ holds the tests of ember/<name>/ (the
op table, tests/ops/opinfo/, and its runner sit in tests/ops/), and the tests of top-level
modules (tensor, dtypes, devices, printing ...) and of SEEDS.md sit here.

Every folder is a package, so test modules of one name in two folders (tests/ops/test_ops.py,
tests/vision/test_ops.py) import as distinct modules (`tests.ops.test_ops`)."""
