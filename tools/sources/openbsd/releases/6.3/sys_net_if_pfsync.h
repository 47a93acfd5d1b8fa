/* Source: netzbasis/openbsd-src@bda9423adea36d456667626b097beded37e4751a:sys/net/if_pfsync.h (OpenBSD 6.3) */

#define	PFSYNCCTL_STATS		1	/* PFSYNC stats */
#define	PFSYNCCTL_MAXID		2

#define	PFSYNCCTL_NAMES { \
	{ 0, 0 }, \
	{ "stats", CTLTYPE_STRUCT }, \
}
