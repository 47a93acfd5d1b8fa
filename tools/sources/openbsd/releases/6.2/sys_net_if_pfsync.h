/* Source: netzbasis/openbsd-src@72ff345029cd271fe7ea8090aff7a89d1d32a7af:sys/net/if_pfsync.h (OpenBSD 6.2) */

#define	PFSYNCCTL_STATS		1	/* PFSYNC stats */
#define	PFSYNCCTL_MAXID		2

#define	PFSYNCCTL_NAMES { \
	{ 0, 0 }, \
	{ "stats", CTLTYPE_STRUCT }, \
}
