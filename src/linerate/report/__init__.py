"""Reports: pure functions of stored data, one exporter per format."""
