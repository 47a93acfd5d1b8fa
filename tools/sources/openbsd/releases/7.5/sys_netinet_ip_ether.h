/* Source: Passw/SecBSD-src@3d86e50ab8533892486221ae96ee45fc6b297f36:sys/netinet/ip_ether.h (OpenBSD 7.5 release-period tree via DERIVATIVE SecBSD 1.5; newvers.sh has $OpenBSD: newvers.sh,v 1.202 2024/02/29$, ost="SecBSD" osr="1.5" STATUS "") */

#define	ETHERIPCTL_ALLOW	1	/* accept incoming EtherIP packets */
#define	ETHERIPCTL_STATS	2	/* etherip stats */
#define	ETHERIPCTL_MAXID	3

#define ETHERIPCTL_NAMES { \
	{ 0, 0 }, \
	{ "allow", CTLTYPE_INT }, \
	{ "stats", CTLTYPE_STRUCT }, \
}
