"""Devices under test: DutDriver per OS family (base.py), pure output parsers (parsers.py)."""
