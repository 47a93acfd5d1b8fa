/* Source: katrinafyi/comp3301@26e979b1b869528443b22c01688cd2f22f31cec8:sys/net/if_pfsync.h (OpenBSD 7.3-stable) */

#define	PFSYNCCTL_STATS		1	/* PFSYNC stats */
#define	PFSYNCCTL_MAXID		2

#define	PFSYNCCTL_NAMES { \
	{ 0, 0 }, \
	{ "stats", CTLTYPE_STRUCT }, \
}
