/* Source: netzbasis/openbsd-src@44b1c1ee8edd20e8f91ee5783670d9841a76b69b:sys/netinet/ip_ether.h (OpenBSD 6.6) */

#define	ETHERIPCTL_ALLOW	1	/* accept incoming EtherIP packets */
#define	ETHERIPCTL_STATS	2	/* etherip stats */
#define	ETHERIPCTL_MAXID	3

#define ETHERIPCTL_NAMES { \
	{ 0, 0 }, \
	{ "allow", CTLTYPE_INT }, \
	{ "stats", CTLTYPE_STRUCT }, \
}
