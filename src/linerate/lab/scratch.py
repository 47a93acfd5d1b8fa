"""A scratch namespace for probes (preflight's kernel features, the KVM probe's qemu)."""

from __future__ import annotations

import contextlib
import secrets
from collections.abc import Iterator

from linerate.lab import netns
from linerate.lab.apply import remove_namespaces
from linerate.lab.registry import LabRecord, Registry
from linerate.lab.signals import terminations_raise
from linerate.model import probe_namespace
from linerate.process import ProcessRef


@contextlib.contextmanager
def scratch_namespace() -> Iterator[tuple[str, str]]:
    """(namespace, probe id) of a scratch namespace registered like a lab *before* it exists — a
    SIGKILL leaves a record `lab clean` acts on — and removed with whatever runs inside it (the KVM
    probe's qemu) and its VM directory, whatever happens."""
    registry = Registry()
    probe_id = secrets.token_hex(3)
    name = probe_namespace(probe_id)
    record = LabRecord(probe_id, owner=ProcessRef.me(), kind="probe", namespaces=[name])
    with terminations_raise():
        registry.create(record)
        try:
            netns.create(name)
            yield name, probe_id
        finally:
            remove_namespaces([name])
            registry.remove_vm_dir(probe_id)
            registry.remove(probe_id)
