"""Traffic generators: argv builders and pure parsers (parse(text) -> result, no I/O)."""
