"""Disk images for a VM DUT: the reference Debian router image (debian.py)."""
