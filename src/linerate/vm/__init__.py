"""The VM DUT: a qemu guest with its own kernel and CPUs between the namespace lab's client and
server. guest_build.py makes the built-in Linux guest from Debian packages, qemu.py the qemu
command line and the KVM probe, taps.py the client/server ends of the guest's NICs, agent.py the
command channel into the guest, lab.py the VmLab that ties them together.
"""
