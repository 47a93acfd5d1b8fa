/* Source: netzbasis/openbsd-src@dc525184cbba8f0bb3f0a2d572fa2b0f3f1fdfe5:sys/sys/vmmeter.h (OpenBSD 6.4) */

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
