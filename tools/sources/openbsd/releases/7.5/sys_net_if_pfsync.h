/* Source: Passw/SecBSD-src@3d86e50ab8533892486221ae96ee45fc6b297f36:sys/net/if_pfsync.h (OpenBSD 7.5 release-period tree via DERIVATIVE SecBSD 1.5; newvers.sh has $OpenBSD: newvers.sh,v 1.202 2024/02/29$, ost="SecBSD" osr="1.5" STATUS "") */

#define	PFSYNCCTL_STATS		1	/* PFSYNC stats */
#define	PFSYNCCTL_MAXID		2

#define	PFSYNCCTL_NAMES { \
	{ 0, 0 }, \
	{ "stats", CTLTYPE_STRUCT }, \
}
