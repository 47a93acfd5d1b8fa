"""linerate — a firewall/router throughput lab and tuning workbench."""

__version__ = "0.1.0"
