"""qemu mechanics of the VM DUT (the testbed itself is testbed/vm.py): guest_build.py makes the
built-in Linux guest from Debian packages, qemu.py the qemu command line, boot.py waits for the
guest's agent (exec/agent.py), accel.py the KVM probe, taps.py the client/server ends of the
guest's NICs, placement.py and observe.py where its threads run and how busy they are."""
