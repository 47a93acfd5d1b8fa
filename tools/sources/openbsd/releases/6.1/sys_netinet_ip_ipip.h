/* Source: netzbasis/openbsd-src@4e6ac999902cada19196d97d1183f40ec7281558:sys/netinet/ip_ipip.h (OpenBSD 6.1) */

#define	IPIPCTL_ALLOW	1		/* accept incoming IP4 packets */
#define	IPIPCTL_STATS	2		/* IPIP stats */
#define	IPIPCTL_MAXID	3

#define IPIPCTL_NAMES { \
	{ 0, 0 }, \
	{ "allow", CTLTYPE_INT }, \
	{ "stats", CTLTYPE_STRUCT }, \
}
