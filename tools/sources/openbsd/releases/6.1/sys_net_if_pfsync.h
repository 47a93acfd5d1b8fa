/* Source: netzbasis/openbsd-src@4e6ac999902cada19196d97d1183f40ec7281558:sys/net/if_pfsync.h (OpenBSD 6.1) */

#define	PFSYNCCTL_STATS		1	/* PFSYNC stats */
#define	PFSYNCCTL_MAXID		2

#define	PFSYNCCTL_NAMES { \
	{ 0, 0 }, \
	{ "stats", CTLTYPE_STRUCT }, \
}
