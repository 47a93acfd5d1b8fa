"""What the packet- and state-rate kinds share: one packet-rate trial and the measurer MLRsearch
drives (measurer.py), the frame path a testbed offers for it (frame_path.py), and the RFC 9693
state trial (state_path.py). The searches themselves are their kinds' (kinds/rfc2544/search.py,
kinds/rfc9693/search.py). Imported by kinds/, testbed/ (its packet and state paths) and cli/."""
