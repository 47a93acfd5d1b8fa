"""Testbeds: where the client, DUT and server of an experiment live. base.py declares the Testbed
and Testbeds protocols and open_testbeds(); namespace.py (the built-in lab on this machine),
vm.py (a qemu guest as the DUT) and ssh.py (real hosts from an inventory) implement them; fake.py
is the one tests use. Nothing outside this package asks which kind it holds."""
