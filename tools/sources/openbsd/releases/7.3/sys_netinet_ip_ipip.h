/* Source: katrinafyi/comp3301@26e979b1b869528443b22c01688cd2f22f31cec8:sys/netinet/ip_ipip.h (OpenBSD 7.3-stable) */

#define	IPIPCTL_ALLOW	1		/* accept incoming IP4 packets */
#define	IPIPCTL_STATS	2		/* IPIP stats */
#define	IPIPCTL_MAXID	3

#define IPIPCTL_NAMES { \
	{ 0, 0 }, \
	{ "allow", CTLTYPE_INT }, \
	{ "stats", CTLTYPE_STRUCT }, \
}
