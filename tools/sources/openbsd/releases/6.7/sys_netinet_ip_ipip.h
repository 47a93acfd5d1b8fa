/* Source: netzbasis/openbsd-src@15c0878c67d873267e45e4d4c5d3c1aef5537271:sys/netinet/ip_ipip.h (OpenBSD 6.7) */

#define	IPIPCTL_ALLOW	1		/* accept incoming IP4 packets */
#define	IPIPCTL_STATS	2		/* IPIP stats */
#define	IPIPCTL_MAXID	3

#define IPIPCTL_NAMES { \
	{ 0, 0 }, \
	{ "allow", CTLTYPE_INT }, \
	{ "stats", CTLTYPE_STRUCT }, \
}
