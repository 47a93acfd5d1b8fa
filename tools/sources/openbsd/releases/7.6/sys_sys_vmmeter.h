/* Source: Passw/SecBSD-src@569ffd723ab6b7eb5bff163849bc36705adea19b:sys/sys/vmmeter.h (OpenBSD 7.6 release-period tree via DERIVATIVE SecBSD 1.6; newvers.sh has $OpenBSD: newvers.sh,v 1.205 2024/09/17$, ost="SecBSD" osr="1.6" STATUS "") */

#define KERN_FORKSTAT_FORK		1
#define KERN_FORKSTAT_VFORK		2
#define KERN_FORKSTAT_TFORK		3
#define KERN_FORKSTAT_KTHREAD		4
#define KERN_FORKSTAT_SIZFORK		5
#define KERN_FORKSTAT_SIZVFORK		6
#define KERN_FORKSTAT_SIZTFORK		7
#define KERN_FORKSTAT_SIZKTHREAD	8
#define KERN_FORKSTAT_MAXID		9

#define CTL_KERN_FORKSTAT_NAMES { \
	{ 0, 0 }, \
	{ "forks", CTLTYPE_INT }, \
	{ "vforks", CTLTYPE_INT }, \
	{ "tforks", CTLTYPE_INT }, \
	{ "kthreads", CTLTYPE_INT }, \
	{ "fork_pages", CTLTYPE_INT }, \
	{ "vfork_pages", CTLTYPE_INT }, \
	{ "tfork_pages", CTLTYPE_INT }, \
	{ "kthread_pages", CTLTYPE_INT }, \
}
