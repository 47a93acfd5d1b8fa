"""Packet-rate searches: RFC 2544 throughput per frame size with MLRsearch, over a PacketPath."""
