/* Source: CobaltBSD/src@826fc1384d40b97a37da503eab1ad9216bf0a960:sys/netinet/ip_ipip.h (OpenBSD 7.4-current (derivative CobaltBSD import)) */

#define	IPIPCTL_ALLOW	1		/* accept incoming IP4 packets */
#define	IPIPCTL_STATS	2		/* IPIP stats */
#define	IPIPCTL_MAXID	3

#define IPIPCTL_NAMES { \
	{ 0, 0 }, \
	{ "allow", CTLTYPE_INT }, \
	{ "stats", CTLTYPE_STRUCT }, \
}
