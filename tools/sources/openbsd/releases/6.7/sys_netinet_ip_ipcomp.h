/* Source: netzbasis/openbsd-src@15c0878c67d873267e45e4d4c5d3c1aef5537271:sys/netinet/ip_ipcomp.h (OpenBSD 6.7) */

#define IPCOMPCTL_ENABLE	1	/* Enable COMP processing */
#define IPCOMPCTL_STATS		2	/* COMP stats */
#define IPCOMPCTL_MAXID		3

#define IPCOMPCTL_NAMES { \
	{ 0, 0 }, \
	{ "enable", CTLTYPE_INT }, \
	{ "stats", CTLTYPE_STRUCT }, \
}
