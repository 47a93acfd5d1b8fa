"""Kernel mechanics of the namespace and VM testbeds (testbed/namespace.py, testbed/vm.py): network
namespaces, rtnetlink batches, nftables, applying a Plan, and the registry of what was made. The
only code here that needs root."""
